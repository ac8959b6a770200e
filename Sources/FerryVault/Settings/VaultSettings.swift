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

/// Where a vault's git folder lives.
public enum RepositoryStorage: String, Sendable, Hashable, Codable, CaseIterable {
    /// `<vault>/.git`, as git does by default.
    case inline
    /// In the profile's git storage with `core.worktree` pointing at the vault (nothing inside the vault; the
    /// seed's iCloud case, where a `.git` folder in a synced folder gets corrupted).
    case separate
}

/// The name and email on sync commits.
public struct VaultAuthor: Sendable, Hashable, Codable {
    /// The author's name.
    public var name: String
    /// The author's email.
    public var email: String

    /// Creates an author.
    public init(name: String, email: String) {
        self.name = name
        self.email = email
    }

    /// `Ferry <ferry@localhost>`.
    public static let `default` = VaultAuthor(name: "Ferry", email: "ferry@localhost")
}

/// Automatic sync: an interval and pull-on-open.
public struct AutoSyncSettings: Sendable, Hashable, Codable {
    /// The shortest interval allowed, in seconds.
    public static let minimumInterval = 10

    /// Seconds between syncs, at least ``minimumInterval``; `nil` turns interval sync off.
    public var intervalSeconds: Int?
    /// Whether opening the vault syncs (pulls) first.
    public var pullOnOpen = false

    /// Creates auto-sync settings; throws when the interval is below ``minimumInterval``.
    public init(intervalSeconds: Int? = nil, pullOnOpen: Bool = false) {
        self.intervalSeconds = intervalSeconds
        self.pullOnOpen = pullOnOpen
    }

    /// The validated interval: throws ``VaultError/Code/invalidArgument`` below the minimum.
    public static func validatedInterval(_ seconds: Int) throws(VaultError) -> Int {
        guard seconds >= minimumInterval else {
            throw VaultError(.invalidArgument, "The sync interval must be at least \(minimumInterval) seconds, not \(seconds).")
        }
        return seconds
    }

    enum CodingKeys: String, CodingKey {
        case intervalSeconds = "interval_seconds"
        case pullOnOpen = "pull_on_open"
    }
}
