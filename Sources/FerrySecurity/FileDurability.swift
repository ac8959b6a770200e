internal import CFerrySystem
import Foundation

/// When a file's bytes reach the disk. A large file written piece by piece and synced once at the end waits, at the
/// end, for every byte to be written out; asked to start as each piece is written, the disk works while the next
/// piece arrives, and the closing `fsync` waits for the tail alone.
package enum FileDurability {
    /// The disk did not take a file's bytes (`fsync` failed): what it holds of them is unknown.
    package struct WriteFailure: Error, CustomStringConvertible {
        package let code: POSIXErrorCode
        package var description: String { "the disk did not write the file (\(code))" }
    }

    /// Starts writing `length` bytes at `offset` of the open file to its disk, without waiting (Linux); elsewhere
    /// nothing. Only a head start, whose errors the later ``synchronize(_:)`` reports.
    package static func startWriteback(_ descriptor: Int32, offset: Int64, length: Int64) {
        guard length > 0 else { return }  // 0 would mean "to the end of the file"
        _ = ferry_start_writeback(descriptor, offset, length)
    }

    /// Waits until the file at `path` is on its disk. Throws ``WriteFailure`` when the disk did not take it, and a
    /// `POSIXError` when the file could not be opened (too many open files, say: nothing is known of its bytes then).
    package static func synchronize(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw WriteFailure(code: POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Waits until the entries of the folder at `path` (a rename into it) are on its disk. File systems that cannot
    /// sync a folder (`EINVAL`, `EBADF`) are taken at their word, as PostgreSQL's `fsync_fname` does.
    package static func synchronizeFolder(_ path: String) throws {
        do {
            try synchronize(path)
        } catch let failure as WriteFailure where failure.code == .EINVAL || failure.code == .EBADF {
            return
        }
    }
}
