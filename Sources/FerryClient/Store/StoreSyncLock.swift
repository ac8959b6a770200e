import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps one store file's syncs (and its set-up) to one process at a time, when an app and its extensions share the
/// file in an App Group container: an advisory `flock` on `<store>.sync-lock`.
///
/// The kernel releases the lock when its process dies, so a process killed mid-sync never blocks the next. Hold it only
/// while syncing: iOS ends an app that is suspended while holding a lock on a file in a shared container.
final class StoreSyncLock: Sendable {
    /// The lock file.
    let path: String
    private let held = Mutex<Int32?>(nil)

    init(path: String) {
        self.path = path
    }

    /// Takes the lock, waiting (and checking for cancellation every `poll`) while another process holds it.
    func acquire(poll: Duration = .milliseconds(50)) async throws {
        while try !tryAcquire() {
            try await Task.sleep(for: poll)
        }
    }

    /// Takes the lock, blocking the thread while another process holds it (store set-up, which is short).
    func acquireBlocking() throws {
        let descriptor = try openDescriptor()
        guard flock(descriptor, LOCK_EX) == 0 else {
            close(descriptor)
            throw StoreError(code: .storeFailed, message: "Could not lock \(path): \(String(cString: strerror(errno))).")
        }
        held.withLock { $0 = descriptor }
    }

    /// Takes the lock if no other process holds it.
    func tryAcquire() throws -> Bool {
        let descriptor = try openDescriptor()
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw StoreError(code: .storeFailed, message: "Could not lock \(path): \(String(cString: strerror(reason))).")
            }
            return false
        }
        held.withLock { $0 = descriptor }
        return true
    }

    /// Lets the next process in.
    func release() {
        guard let descriptor = held.withLock({ held -> Int32? in defer { held = nil }; return held }) else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// The lock file, created owner-only, not inherited by child processes.
    private func openDescriptor() throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError(code: .storeFailed, message: "Could not open the lock file \(path): \(String(cString: strerror(errno))).")
        }
        return descriptor
    }
}
