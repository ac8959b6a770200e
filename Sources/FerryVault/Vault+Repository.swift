import Logging
import Foundation

extension Vault {
    /// Creates the vault's repository, inline (`<vault>/.git`) or in the profile's git storage, and remembers
    /// the choice; fails when the vault already has one.
    @discardableResult
    public func initialiseRepository(storage: RepositoryStorage = .inline, initialBranch: String = "main") throws -> RepositoryLocation {
        try checkFolderAccess()
        if let existing = discoverRepository().location {
            throw VaultError(.repositoryExists, "The vault already has a repository at \(existing.gitDirectory.path(percentEncoded: false)) (\(existing.kind.rawValue)).")
        }
        let gitDirectory: URL? = storage == .separate ? profile.locator.storageLocation(for: folder) : nil
        if let gitDirectory {
            try FileManager.default.createDirectory(at: gitDirectory.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        let repository = try GitRepository.create(workTree: folder, gitDirectory: gitDirectory, initialBranch: initialBranch)
        let path = self.path
        try profile.settingsStore.update { $0.folders[path, default: .init()].storage = storage }
        profile.logger.info("vault repository created", metadata: ["ferry.vault.path": "\(path)", "ferry.vault.storage": "\(storage.rawValue)"])
        return RepositoryLocation(gitDirectory: repository.gitDirectory, kind: storage == .inline ? .inline : .storage)
    }

    /// Clones `url` into the vault: creates the repository (inline or in storage), sets the vault's origin,
    /// and syncs, which checks out the remote's branch (the vault folder's notes are committed first and
    /// merged like any other change, so nothing already in the folder is lost).
    public func clone(from url: String, storage: RepositoryStorage = .inline, options: SyncOptions = SyncOptions()) async throws -> VaultSyncReport {
        try initialiseRepository(storage: storage)
        try setOrigin(url)
        return try await sync(options)
    }

    /// Sets the vault's own origin; with `global`, the global default too.
    public func setOrigin(_ url: String, global: Bool = false) throws {
        let trimmed = url.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.contains(" ") else { throw VaultError(.invalidArgument, "'\(url)' is not a git URL.") }
        if let parsed = URL(string: trimmed), parsed.password != nil {
            throw VaultError(.invalidArgument, "Put the token in 'ferry vault auth token', not in the URL: URLs end up in logs and configs.")
        }
        let path = self.path
        try profile.settingsStore.update { settings in
            settings.folders[path, default: .init()].origin = trimmed
            if global { settings.globalOrigin = trimmed }
        }
    }

    /// Resolves the origin through the fallback chain; an origin recovered from a later step is written back to
    /// the vault's setting and the global default when `writeBack` is set.
    public func resolveOrigin(writeBack: Bool = true) throws -> OriginResolution {
        let repositoryOrigin: String? = discoverRepository().location.flatMap { location in
            try? GitRepository.open(gitDirectory: location.gitDirectory, workTree: folder).config("remote.origin.url")
        }
        return try resolveOrigin(repositoryOrigin: repositoryOrigin, writeBack: writeBack)
    }

    func resolveOrigin(repositoryOrigin: String?, writeBack: Bool) throws -> OriginResolution {
        var settings = try profile.settingsStore.load()
        let resolution = OriginResolver.resolve(vaultPath: path, settings: settings, repositoryOrigin: repositoryOrigin)
        if writeBack, OriginResolver.writeBack(resolution, vaultPath: path, into: &settings) {
            try profile.settingsStore.save(settings)
            profile.logger.info("origin recovered", metadata: ["ferry.vault.origin.source": "\(resolution.source.rawValue)"])
        }
        return resolution
    }
}
