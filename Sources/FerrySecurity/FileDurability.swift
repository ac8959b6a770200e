import CFerrySystem
import Foundation

/// When a file's bytes reach the disk. A large file written piece by piece and synced once at the end waits, at the
/// end, for every byte to be written out; asked to start as each piece is written, the disk works while the next
/// piece arrives, and the closing `fsync` waits for the tail alone.
package enum FileDurability {
    /// Starts writing `length` bytes at `offset` of the open file to its disk, without waiting (Linux); elsewhere
    /// nothing. Only a head start: what must survive a power loss still needs ``synchronize(_:)``.
    package static func startWriteback(_ descriptor: Int32, offset: Int64, length: Int64) {
        _ = ferry_start_writeback(descriptor, offset, length)
    }

    /// Waits until the file or folder at `path` is on its disk: a file's bytes, or a folder's entries (a rename into
    /// it).
    package static func synchronize(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let synced = fsync(descriptor) == 0 ? 0 : errno
        close(descriptor)
        guard synced == 0 else { throw POSIXError(POSIXErrorCode(rawValue: synced) ?? .EIO) }
    }
}
