import GRDB

/// What SQLite's errors mean (``StorageAvailability``).
enum SQLiteFailures: DriverFailures {
    static func wrapped(in error: any Error) -> [any Error]? { nil }

    static func isInvalidData(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_MISMATCH, .SQLITE_TOOBIG, .SQLITE_RANGE].contains(error.resultCode)
    }

    static func isUnavailable(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_MISUSE].contains(error.resultCode)
    }

    static func summary(_ error: any Error) -> String? {
        (error as? DatabaseError).map { "DatabaseError(\($0.extendedResultCode))" }
    }
}
