/// Where a vault's git folder lives.
public enum RepositoryStorage: String, Sendable, Hashable, Codable, CaseIterable {
    /// `<vault>/.git`, as git does by default.
    case inline
    /// In the profile's git storage with `core.worktree` pointing at the vault (nothing inside the vault; the
    /// seed's iCloud case, where a `.git` folder in a synced folder gets corrupted).
    case separate
}
