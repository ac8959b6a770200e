import Foundation
import Logging

/// A profile's vault state: its settings, credentials and git storage (`<profile>/vault.json`,
/// `<profile>/vault-credentials.json`, `<profile>/git-storage/`).
///
/// ```swift
/// let profile = VaultProfile(folder: profileFolder)
/// let vault = try profile.choose(URL(filePath: "/Users/ada/Notes"))
/// let report = try await vault.sync()
/// print(report.summary)   // committed 2 files, pulled 1 commit, pushed 1 commit
/// ```
public struct VaultProfile: Sendable {
    /// The profile folder.
    public let folder: URL
    /// The settings file.
    public let settingsStore: VaultSettingsStore
    /// Where credentials are kept.
    public let credentialStore: any CredentialStore
    /// Finds repositories, inline or in the git storage.
    public let locator: RepositoryLocator
    /// Where sync and discovery log.
    public let logger: Logger

    /// Creates the vault state of the profile in `folder`; credentials default to a 0600 file there.
    public init(folder: URL, credentialStore: (any CredentialStore)? = nil, logger: Logger = Logger(label: "ferry.vault")) {
        self.folder = folder
        self.settingsStore = VaultSettingsStore(fileURL: folder.appending(path: "vault.json"))
        self.credentialStore = credentialStore ?? FileCredentialStore(fileURL: folder.appending(path: "vault-credentials.json"))
        self.locator = RepositoryLocator(storage: folder.appending(path: "git-storage", directoryHint: .isDirectory))
        self.logger = logger
    }

    /// Chooses `path` as the vault, replacing the previous one; the folder must exist.
    @discardableResult
    public func choose(_ path: URL) throws -> Vault {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path.path(percentEncoded: false), isDirectory: &isFolder), isFolder.boolValue else {
            throw VaultError(.vaultMissing, "'\(path.path(percentEncoded: false))' is not a folder; choose an existing folder as the vault.")
        }
        let canonical = RepositoryLocator.canonicalPath(path)
        try settingsStore.update { settings in
            settings.vaultPath = canonical
            if settings.folders[canonical] == nil { settings.folders[canonical] = .init() }
        }
        logger.info("vault chosen", metadata: ["ferry.vault.path": "\(canonical)"])
        return Vault(folder: URL(filePath: canonical, directoryHint: .isDirectory), profile: self)
    }

    /// The chosen vault.
    public func current() throws -> Vault {
        guard let path = try settingsStore.load().vaultPath else {
            throw VaultError(.vaultMissing, "No vault is chosen; choose a folder first ('ferry vault open PATH').")
        }
        return Vault(folder: URL(filePath: path, directoryHint: .isDirectory), profile: self)
    }

    /// Sets the global default origin.
    public func setGlobalOrigin(_ url: String?) throws {
        try settingsStore.update { $0.globalOrigin = url }
    }
}
