import Foundation

/// An exclusive `flock` on a lock file (0600), taken without waiting, among every process that can open the file: on
/// one machine, or on a shared volume whose file system supports `flock` (NFSv4, EFS, most cluster file systems).
///
/// The lock file may be removed by the holder (when what it guards is gone). A process that opened it just before then
/// holds a lock on a file no longer at its path, which nobody else can see; so a lock is only taken on the file that is
/// at the path once it is held.
public struct ExclusiveFileLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock on `path`, creating the file; `nil` when another holds it.
    public static func take(_ path: String) throws -> ExclusiveFileLock? {
        while true {
            let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
                let failure = errno
                close(opened)
                if failure == EWOULDBLOCK { return nil }
                throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
            }
            var held = stat(), current = stat()
            if fstat(opened, &held) == 0, stat(path, &current) == 0, held.st_ino == current.st_ino, held.st_dev == current.st_dev {
                return ExclusiveFileLock(descriptor: opened)
            }
            close(opened)  // removed or replaced meanwhile: lock the file now there
        }
    }

    /// Lets the lock go (closing the file releases the `flock`).
    public func release() {
        close(descriptor)
    }
}
