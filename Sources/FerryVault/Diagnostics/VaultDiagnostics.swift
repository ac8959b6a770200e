/// The vault's state in one value (the notes-vault app's diagnostics line), with the known critical signals explained.
public struct VaultDiagnostics: Sendable, Hashable, Codable {
    /// A configured remote.
    public struct Remote: Sendable, Hashable, Codable {
        /// The remote's name.
        public var name: String
        /// The URL as configured.
        public var url: String
        /// The URL git uses after `url.<base>.insteadOf` rewriting.
        public var effectiveURL: String

        enum CodingKeys: String, CodingKey {
            case name, url
            case effectiveURL = "effective_url"
        }
    }

    /// A known failure state and what it means.
    public struct Signal: Sendable, Hashable, Codable {
        /// A stable name, such as `repo-missing`.
        public var code: String
        /// What it means and what to do.
        public var explanation: String
    }

    /// The vault folder, or `nil` when none is chosen.
    public var vaultPath: String?
    /// The storage key of the vault.
    public var storageKey: String?
    /// Whether a repository was found.
    public var repositoryFound: Bool
    /// How it was found (`inline`, `git-file`, `storage`, `legacy`, `scan`).
    public var repositoryKind: RepositoryLocation.Kind?
    /// Its git folder.
    public var repositoryPath: String?
    /// Every candidate examined, in order.
    public var candidates: [String]
    /// Repositories in the profile's git storage.
    public var storageRepositoryCount: Int
    /// Whether a global default origin is set.
    public var globalOriginPresent: Bool
    /// The repository's remotes.
    public var remotes: [Remote]
    /// The resolved origin, or `nil`.
    public var origin: String?
    /// Where the origin came from.
    public var originSource: OriginSource
    /// Whether the folder can be read and written.
    public var folderAccessible: Bool
    /// The critical signals present.
    public var signals: [Signal]

    /// `vault=… storageKey=… repo=found(inline) candidates=3 gitStorageCount=0 globalOrigin=empty remotes=origin→URL originSource=vault`.
    public var line: String {
        let repo = repositoryFound ? "found(\(repositoryKind?.rawValue ?? "?"))" : "missing"
        let remoteText = remotes.isEmpty ? "none" : remotes.map { remote in
            remote.url == remote.effectiveURL ? "\(remote.name)→\(remote.url)" : "\(remote.name)→\(remote.url) (effective \(remote.effectiveURL))"
        }.joined(separator: ",")
        return "vault=\(vaultPath ?? "none") storageKey=\(storageKey ?? "none") repo=\(repo) candidates=\(candidates.count) "
            + "gitStorageCount=\(storageRepositoryCount) globalOrigin=\(globalOriginPresent ? "present" : "empty") "
            + "origin=\(origin ?? "empty") remotes=\(remoteText) originSource=\(originSource.rawValue)"
    }

    enum CodingKeys: String, CodingKey {
        case vaultPath = "vault_path"
        case storageKey = "storage_key"
        case repositoryFound = "repository_found"
        case repositoryKind = "repository_kind"
        case repositoryPath = "repository_path"
        case candidates
        case storageRepositoryCount = "storage_repository_count"
        case globalOriginPresent = "global_origin_present"
        case remotes, origin
        case originSource = "origin_source"
        case folderAccessible = "folder_accessible"
        case signals
    }
}
