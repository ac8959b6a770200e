import FerryCore
import GRDB
import PostgresNIO

/// Tells a database that is down or overloaded (retry later: 503), and data the database refuses
/// (a client's mistake that validation missed: 400), from a fault in the server (500).
enum StorageAvailability {
    /// PostgreSQL's class 22 (data exception: invalid text, numeric overflow, …) or SQLite's type mismatch.
    static func isInvalidData(_ error: any Error) -> Bool {
        switch error {
        case let error as PostgresTransactionError:
            return [error.beginError, error.closureError, error.commitError].compactMap { $0 }.contains(where: isInvalidData)
        case let error as PSQLError:
            return error.code == .server && error.serverInfo?[.sqlState]?.hasPrefix("22") == true
        case let error as DatabaseError:
            return [.SQLITE_MISMATCH, .SQLITE_TOOBIG, .SQLITE_RANGE].contains(error.resultCode)
        default:
            return false
        }
    }

    /// Whether the request's deadline passed (a `TimeoutError`, also from inside a PostgreSQL transaction): the
    /// server was busy or the database slow, so the answer does not blame the database.
    static func isDeadline(_ error: any Error) -> Bool {
        switch error {
        case is TimeoutError:
            return true
        case let error as PostgresTransactionError:
            return [error.beginError, error.closureError, error.commitError].compactMap { $0 }.contains(where: isDeadline)
        default:
            return false
        }
    }

    /// What an unexpected failure's logs may say of it: its type and, from a database, its SQL state or result code,
    /// never a message (it could quote the values of the request).
    static func summary(_ error: any Error) -> String {
        switch error {
        case let error as PostgresTransactionError:
            let inner = [error.beginError, error.closureError, error.commitError, error.rollbackError].compactMap { $0 }
            return "PostgresTransactionError(" + inner.map(summary).joined(separator: ", ") + ")"
        case let error as PSQLError:
            return "PSQLError(\(error.code), sqlState: \(error.serverInfo?[.sqlState] ?? "-"))"
        case let error as DatabaseError:
            return "DatabaseError(\(error.extendedResultCode))"
        default:
            return String(reflecting: type(of: error))
        }
    }

    static func isUnavailable(_ error: any Error) -> Bool {
        switch error {
        case let error as PostgresTransactionError:
            let inner = [error.beginError, error.closureError, error.commitError].compactMap { $0 }
            return inner.contains(where: isUnavailable)
        case let error as PSQLError:
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
        case let error as DatabaseError:
            return [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_MISUSE].contains(error.resultCode)
        case is TimeoutError:
            return true
        default:
            return String(reflecting: type(of: error)).contains("ConnectionPoolError")
        }
    }
}
