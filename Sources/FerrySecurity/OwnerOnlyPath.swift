import Foundation

/// Folders and files that hold data or credentials: readable by their owner only (0700 folders, 0600 files), made so
/// when created and tightened when found looser, so a data folder made by an older version or by hand is fixed at
/// start-up rather than left world-readable.
public enum OwnerOnlyPath {
    /// Creates the folder at `path` (and its parents) with mode 0700, or tightens an existing one to 0700.
    /// - Returns: whether an existing folder's mode was tightened.
    @discardableResult
    public static func folder(_ path: String) throws -> Bool {
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            return false
        }
        return try tighten(path, to: 0o700)
    }

    /// Creates an empty file at `path` with mode 0600 when there is none (SQLite then gives its `-wal` and `-shm` files
    /// the same mode), or tightens an existing one to 0600.
    /// - Returns: whether an existing file's mode was tightened.
    @discardableResult
    public static func file(_ path: String) throws -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if descriptor >= 0 {
            close(descriptor)
            return false
        }
        guard errno == EEXIST else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return try tighten(path, to: 0o600)
    }

    /// Tightens `path` to `mode` if it grants anything to the group or others; `false` when it did not need to.
    private static func tighten(_ path: String, to mode: mode_t) throws -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard status.st_mode & 0o077 != 0 else { return false }
        guard chmod(path, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
        return true
    }
}
