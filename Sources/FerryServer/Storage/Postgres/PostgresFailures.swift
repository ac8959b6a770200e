import PostgresNIO

/// What PostgreSQL's errors mean (``StorageAvailability``).
enum PostgresFailures: DriverFailures {
    static func wrapped(in error: any Error) -> [any Error]? {
        guard let error = error as? PostgresTransactionError else { return nil }
        return [error.beginError, error.closureError, error.commitError].compactMap { $0 }
    }

    /// Class 22: data exception (invalid text, numeric overflow, …).
    static func isInvalidData(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        return error.code == .server && error.serverInfo?[.sqlState]?.hasPrefix("22") == true
    }

    static func isUnavailable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown, .queryCancelled:
            return true
        case .server:
            // Class 08: connection exception; 53: insufficient resources; 57: operator intervention;
            // 55000: the database does not allow connections.
            guard let state = error.serverInfo?[.sqlState] else { return false }
            // 40001/40P01: serialization failure or deadlock, which a retry resolves.
            return state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57") || state == "55000"
                || state == "40001" || state == "40P01"
        default:
            return false
        }
    }

    static func summary(_ error: any Error) -> String? {
        switch error {
        case let error as PostgresTransactionError:
            let inner = [error.beginError, error.closureError, error.commitError, error.rollbackError].compactMap { $0 }
            return "PostgresTransactionError(" + inner.map(StorageAvailability.summary).joined(separator: ", ") + ")"
        case let error as PSQLError:
            return "PSQLError(\(error.code), sqlState: \(error.serverInfo?[.sqlState] ?? "-"))"
        default:
            return nil
        }
    }
}
