import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock on `<data-dir>/ferry.lock`: a running server holds it shared, a restore needs it exclusive, so a
/// restore cannot replace a database under a running server. The kernel drops the lock when its process dies, so a
/// killed server never leaves a stale one.
final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    /// Why the lock could not be taken.
    struct Busy: Error {}

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock of `dataDirectory` (creating its file, 0600); `exclusive` without waiting, shared with waiting never
    /// longer than a held exclusive lock (a restore) lasts. Throws ``Busy`` when an exclusive lock is refused.
    static func take(_ dataDirectory: String, exclusive: Bool) throws -> DataDirectoryLock {
        let path = URL(filePath: dataDirectory).appending(path: "ferry.lock").path()
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard flock(descriptor, exclusive ? LOCK_EX | LOCK_NB : LOCK_SH) == 0 else {
            close(descriptor)
            throw Busy()
        }
        return DataDirectoryLock(descriptor: descriptor)
    }

    deinit {
        close(descriptor)
    }
}
