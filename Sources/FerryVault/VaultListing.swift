/// One folder's content: its child folders first, then its notes.
public struct VaultListing: Sendable, Hashable, Codable {
    /// The listed folder, relative to the vault (`""` for the vault itself).
    public var folder: String
    /// Direct child folders, sorted.
    public var folders: [String]
    /// Notes (files) directly in the folder, sorted.
    public var notes: [String]
}
