import Foundation

/// A profile's vault settings: the chosen folder, origins, commit author and template, auto-sync.
public struct VaultSettings: Sendable, Hashable, Codable {
    /// The chosen vault folder (absolute, standardised); one at a time.
    public var vaultPath: String?
    /// Per-folder settings, keyed by absolute path; kept for earlier vaults so a child vault can inherit.
    public var folders: [String: FolderSettings] = [:]
    /// The global default origin.
    public var globalOrigin: String?
    /// The author of sync commits.
    public var author = VaultAuthor.default
    /// The commit message template (see ``CommitMessageTemplate``).
    public var commitMessageTemplate = CommitMessageTemplate.defaultText
    /// Automatic sync.
    public var autoSync = AutoSyncSettings()

    /// Settings of one vault folder.
    public struct FolderSettings: Sendable, Hashable, Codable {
        /// The folder's own origin.
        public var origin: String?
        /// Where its repository is kept when Ferry creates one.
        public var storage: RepositoryStorage?

        /// Creates folder settings.
        public init(origin: String? = nil, storage: RepositoryStorage? = nil) {
            self.origin = origin
            self.storage = storage
        }
    }

    /// Creates empty settings.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case vaultPath = "vault_path"
        case folders
        case globalOrigin = "global_origin"
        case author
        case commitMessageTemplate = "commit_message_template"
        case autoSync = "auto_sync"
    }

    /// Decodes settings, defaulting every missing key (older files keep working).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        vaultPath = try container.decodeIfPresent(String.self, forKey: .vaultPath)
        folders = try container.decodeIfPresent([String: FolderSettings].self, forKey: .folders) ?? [:]
        globalOrigin = try container.decodeIfPresent(String.self, forKey: .globalOrigin)
        author = try container.decodeIfPresent(VaultAuthor.self, forKey: .author) ?? .default
        commitMessageTemplate = try container.decodeIfPresent(String.self, forKey: .commitMessageTemplate) ?? CommitMessageTemplate.defaultText
        autoSync = try container.decodeIfPresent(AutoSyncSettings.self, forKey: .autoSync) ?? AutoSyncSettings()
    }
}
