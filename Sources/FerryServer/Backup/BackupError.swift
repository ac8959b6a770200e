import FerryCore

/// Why a backup or a restore did not happen: a stable code and one line a person can act on.
public struct BackupError: FerryError {
    /// What went wrong, as a stable code.
    public var code: ErrorCode
    /// One line saying what went wrong and what to do.
    public var message: String

    /// Creates a backup error.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode {
    /// The data folder has no SQLite database (the server runs on PostgreSQL, or never started there).
    public static let noEmbeddedDatabase: ErrorCode = "no_embedded_database"
    /// A backup's file is missing or its size or SHA-256 differs from its manifest.
    public static let backupDamaged: ErrorCode = "backup_damaged"
    /// A backup made by a newer ferry, whose migrations this one does not know.
    public static let backupTooNew: ErrorCode = "backup_too_new"
    /// A restore onto a data folder a running server holds.
    public static let serverRunning: ErrorCode = "server_running"
    /// Reading or writing the backup's files failed (permissions, disk full).
    public static let backupIOFailed: ErrorCode = "backup_io_failed"
}
