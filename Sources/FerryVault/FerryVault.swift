/// Git-backed vault sync; see the module's documentation. The API arrives with the vault issue.
public enum FerryVault {}
