import Foundation

extension VaultProfile {
    /// Diagnoses the chosen vault, or reports that none is chosen. Changes nothing (no origin write-back).
    public func diagnose() -> VaultDiagnostics {
        if let vault = try? current() { return vault.diagnose() }
        let settings = (try? settingsStore.load()) ?? VaultSettings()
        return VaultDiagnostics(
            vaultPath: nil, storageKey: nil, repositoryFound: false, repositoryKind: nil, repositoryPath: nil, candidates: [],
            storageRepositoryCount: locator.storedRepositories().count, globalOriginPresent: settings.globalOrigin?.isEmpty == false,
            remotes: [], origin: settings.globalOrigin, originSource: settings.globalOrigin == nil ? .none : .global, folderAccessible: false,
            signals: [.init(code: "vault-missing", explanation: "No vault folder is chosen: choose one ('ferry vault open PATH').")]
        )
    }
}

extension Vault {
    /// The vault's diagnostics: repository discovery, storage, origins and remotes, and the seed's critical
    /// signals with their explanation. Changes nothing.
    public func diagnose() -> VaultDiagnostics {
        let discovery = discoverRepository()
        let settings = (try? profile.settingsStore.load()) ?? VaultSettings()
        let repository = discovery.location.flatMap { try? GitRepository.open(gitDirectory: $0.gitDirectory, workTree: folder) }
        let remotes = (repository?.remoteNames() ?? []).compactMap { name in
            repository?.remoteURLs(name).map { VaultDiagnostics.Remote(name: name, url: $0.configured, effectiveURL: $0.effective) }
        }
        let origin = OriginResolver.resolve(vaultPath: path, settings: settings, repositoryOrigin: repository?.config("remote.origin.url"))
        var accessible = true
        var signals: [VaultDiagnostics.Signal] = []
        do {
            try checkFolderAccess()
        } catch {
            accessible = false
            if error.code == .vaultMissing {
                signals.append(.init(code: "vault-folder-missing",
                    explanation: "The vault folder no longer exists (moved or deleted); choose it again ('ferry vault open PATH')."))
            } else {
                signals.append(.init(code: "operation-not-permitted",
                    explanation: "Operation not permitted: access to the vault folder was lost (on iOS, the security-scoped bookmark); pick the folder again."))
            }
        }
        if discovery.location == nil && discovery.storageRepositoryCount == 0 {
            signals.append(.init(code: "repo-missing",
                explanation: "repo=missing and gitStorageCount=0: the local repository does not exist yet; initialise it ('ferry vault init') or clone ('ferry vault clone URL PATH')."))
        } else if discovery.location == nil {
            signals.append(.init(code: "repo-not-matched",
                explanation: "repo=missing although the git storage holds \(discovery.storageRepositoryCount) repositories: none has this folder as core.worktree (the vault moved?); open the original folder or clone again."))
        }
        if origin.source == .none {
            signals.append(.init(code: "origin-empty",
                explanation: "origin=empty and originSource=none: no origin is configured anywhere (vault, global, parent vault, repository config); set one ('ferry vault origin set URL')."))
        }
        if let gitDirectory = discovery.location?.gitDirectory, FileManager.default.fileExists(atPath: gitDirectory.appending(path: "index.lock").path(percentEncoded: false)) {
            signals.append(.init(code: "index-locked",
                explanation: "index.lock exists: another git process is running, or a crashed one left it; sync removes it once it is older than a few minutes."))
        }
        return VaultDiagnostics(
            vaultPath: path, storageKey: storageKey, repositoryFound: discovery.location != nil, repositoryKind: discovery.location?.kind,
            repositoryPath: discovery.location?.gitDirectory.path(percentEncoded: false), candidates: discovery.candidates,
            storageRepositoryCount: discovery.storageRepositoryCount, globalOriginPresent: settings.globalOrigin?.isEmpty == false,
            remotes: remotes, origin: origin.url, originSource: origin.source, folderAccessible: accessible, signals: signals
        )
    }
}
