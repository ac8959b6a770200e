import Foundation

/// An exclusive lock on a repository for one sync (`flock` on `<git dir>/ferry-sync.lock`), so two Ferry
/// processes never sync one vault at once. The kernel releases it if the process dies.
struct SyncLock {
    private let descriptor: Int32

    /// Takes the lock, or throws ``VaultError/Code/repositoryLocked`` when another sync holds it.
    init(gitDirectory: URL) throws(VaultError) {
        let path = gitDirectory.appending(path: "ferry-sync.lock").path(percentEncoded: false)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw VaultError(.permissionDenied, "Cannot open \(path): permission denied. Pick the folder again.")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw VaultError(.repositoryLocked, "Another sync of this vault is running; wait for it to finish.")
        }
        self.descriptor = descriptor
    }

    /// Releases the lock.
    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
