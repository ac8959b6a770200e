import Foundation

/// The chosen vault folder and the profile it belongs to; listing, repository set-up, sync and diagnostics
/// live in extensions (`Vault+Listing`, `Vault+Repository`, `Vault+Sync`, `Vault+Diagnostics`).
public struct Vault: Sendable {
    /// The vault folder (absolute, symbolic links resolved).
    public let folder: URL
    /// The profile whose settings, credentials and storage the vault uses.
    public let profile: VaultProfile

    /// Creates a vault for `folder` in `profile`; use ``VaultProfile/choose(_:)`` to persist the choice.
    public init(folder: URL, profile: VaultProfile) {
        self.folder = folder
        self.profile = profile
    }

    /// The folder's canonical path, the key of its settings.
    public var path: String { RepositoryLocator.canonicalPath(folder) }

    /// The vault's storage key (see ``RepositoryLocator/storageKey(for:)``).
    public var storageKey: String { RepositoryLocator.storageKey(for: folder) }

    /// Finds the vault's repository.
    public func discoverRepository() -> RepositoryDiscovery {
        profile.locator.locate(vault: folder)
    }

    /// Runs blocking libgit2 work on a thread of its own: off Swift's cooperative pool, and off Dispatch's global
    /// queues too, whose few threads (one per core) URLSession and others need to make progress.
    static func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// Throws ``VaultError/Code/permissionDenied`` when the folder cannot be read and written (on Apple
    /// platforms, a lost security-scoped bookmark), ``VaultError/Code/vaultMissing`` when it is gone.
    func checkFolderAccess() throws(VaultError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path(percentEncoded: false), isDirectory: &isFolder), isFolder.boolValue else {
            throw VaultError(.vaultMissing, "The vault folder '\(path)' is gone; choose it again ('ferry vault open PATH').")
        }
        guard FileManager.default.isReadableFile(atPath: folder.path(percentEncoded: false)), FileManager.default.isWritableFile(atPath: folder.path(percentEncoded: false)) else {
            throw VaultError(.permissionDenied,
                "Permission denied on the vault folder (Operation not permitted): pick the folder again ('ferry vault open PATH').")
        }
    }
}
