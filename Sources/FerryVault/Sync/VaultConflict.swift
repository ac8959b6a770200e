/// A path both sides changed in overlapping ways: the local note kept its content and the remote version was
/// written beside it.
public struct VaultConflict: Sendable, Hashable, Codable {
    /// How the two sides disagreed.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Both edited the same lines.
        case bothModified = "both-modified"
        /// Both created the path with different content.
        case bothAdded = "both-added"
        /// This side deleted the note, the remote edited it: the remote version is the copy.
        case deletedLocally = "deleted-locally"
        /// The remote deleted the note, this side edited it: the local note stays, there is no copy.
        case deletedRemotely = "deleted-remotely"
    }

    /// The note's path, relative to the vault.
    public var path: String
    /// Where the remote version was written, relative to the vault; `nil` when the remote deleted the note.
    public var copyPath: String?
    /// How the sides disagreed.
    public var kind: Kind

    /// Creates a conflict record.
    public init(path: String, copyPath: String?, kind: Kind) {
        self.path = path
        self.copyPath = copyPath
        self.kind = kind
    }

    enum CodingKeys: String, CodingKey {
        case path
        case copyPath = "copy_path"
        case kind
    }
}
