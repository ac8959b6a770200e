import Foundation

/// Where a vault's repository was found, and how.
public struct RepositoryLocation: Sendable, Hashable {
    /// The discovery step that found it.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// `<vault>/.git` is a folder.
        case inline
        /// `<vault>/.git` is a file (`gitdir: …`) pointing elsewhere.
        case gitFile = "git-file"
        /// `<storage>/<storage key>.git`, whose `core.worktree` is the vault.
        case storage
        /// A legacy name in the storage (`<key> - <folder>.git`, `<folder>.git`, the full-hash name).
        case legacy
        /// Found by scanning the storage for a repository whose `core.worktree` is the vault.
        case scan
    }

    /// The git folder.
    public var gitDirectory: URL
    /// How it was found.
    public var kind: Kind

    /// Creates a location.
    public init(gitDirectory: URL, kind: Kind) {
        self.gitDirectory = gitDirectory
        self.kind = kind
    }
}
