import FerryCore

/// Tells a database that is down or overloaded (retry later: 503), and data the database refuses
/// (a client's mistake that validation missed: 400), from a fault in the server (500).
enum StorageAvailability {
    /// What each engine's driver errors mean, one type in each engine's folder.
    static var drivers: [any DriverFailures.Type] { [SQLiteFailures.self, PostgresFailures.self] }

    /// PostgreSQL's class 22 (data exception: invalid text, numeric overflow, …) or SQLite's type mismatch.
    static func isInvalidData(_ error: any Error) -> Bool {
        if let inner = wrapped(in: error) { return inner.contains(where: isInvalidData) }
        return drivers.contains { $0.isInvalidData(error) }
    }

    /// Whether the request's deadline passed (a `TimeoutError`, also from inside a PostgreSQL transaction): the
    /// server was busy or the database slow, so the answer does not blame the database.
    static func isDeadline(_ error: any Error) -> Bool {
        if error is TimeoutError { return true }
        return wrapped(in: error)?.contains(where: isDeadline) ?? false
    }

    /// What an unexpected failure's logs may say of it: its type and, from a database, its SQL state or result code,
    /// never a message (it could quote the values of the request).
    static func summary(_ error: any Error) -> String {
        drivers.lazy.compactMap { $0.summary(error) }.first ?? String(reflecting: type(of: error))
    }

    static func isUnavailable(_ error: any Error) -> Bool {
        if let inner = wrapped(in: error) { return inner.contains(where: isUnavailable) }
        if error is TimeoutError { return true }
        return drivers.contains { $0.isUnavailable(error) } || String(reflecting: type(of: error)).contains("ConnectionPoolError")
    }

    /// The errors a driver's wrapper holds (a transaction's steps), or `nil` when `error` wraps none.
    private static func wrapped(in error: any Error) -> [any Error]? {
        drivers.lazy.compactMap { $0.wrapped(in: error) }.first
    }
}

/// What one database driver's errors mean, for ``StorageAvailability``; each engine's folder has one.
protocol DriverFailures {
    /// The errors `error` wraps (a transaction's begin, body and commit), or `nil` when it is not such a wrapper.
    static func wrapped(in error: any Error) -> [any Error]?
    /// Whether the database refused the data itself.
    static func isInvalidData(_ error: any Error) -> Bool
    /// Whether the database is down, overloaded, or asks for the work to be tried again.
    static func isUnavailable(_ error: any Error) -> Bool
    /// The log line for one of this driver's errors, never its message; `nil` when it is not one.
    static func summary(_ error: any Error) -> String?
}
