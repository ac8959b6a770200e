import Foundation
import GRDB
import GRDBSQLite

extension Statement {
    /// Runs the statement once with `values` bound by position, each straight into SQLite.
    ///
    /// The two writers of a row per record (the server's push and the device's store) call this for every row.
    /// Through GRDB's `StatementArguments`, each value was boxed as an existential, unboxed again and bound in a
    /// closure nested per argument: a third of saving a row, by profile. Strings and blobs are copied by SQLite
    /// (`SQLITE_TRANSIENT`), so nothing here outlives the call.
    /// - Throws: a `DatabaseError` when a value cannot be bound (more values than the statement's parameters) or
    ///   the statement fails.
    public func execute(columns values: [DatabaseValue]) throws {
        // Resets the statement and clears its bindings; GRDB then takes the statement's bindings as set.
        setUncheckedArguments(StatementArguments())
        for (offset, value) in values.enumerated() {
            let code = Self.bind(value, to: sqliteStatement, at: CInt(offset + 1))
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "binding parameter \(offset + 1) failed")
            }
        }
        try execute()
    }

    private static func bind(_ value: DatabaseValue, to statement: SQLiteStatement, at index: CInt) -> CInt {
        switch value.storage {
        case .null:
            return sqlite3_bind_null(statement, index)
        case .int64(let integer):
            return sqlite3_bind_int64(statement, index, integer)
        case .double(let number):
            return sqlite3_bind_double(statement, index, number)
        case .string(var text):
            // An empty buffer may have no address, which would bind NULL: the empty string has one.
            return text.withUTF8 { utf8 in
                guard let address = utf8.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
                return sqlite3_bind_text(statement, index, address, CInt(utf8.count), transient)
            }
        case .blob(let data):
            return data.withUnsafeBytes { bytes in
                guard let address = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
                return sqlite3_bind_blob(statement, index, address, CInt(bytes.count), transient)
            }
        }
    }

    /// SQLite copies the value before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
