import Foundation
import GRDB
import GRDBSQLite

/// The current row of a statement, read straight from SQLite: a text column's bytes are SQLite's own, valid only
/// inside the call that gives them, so a reader that writes them somewhere (a reply's JSON) copies each value once.
public struct RawRow {
    private let statement: SQLiteStatement

    /// A column's storage class in this row.
    public enum Kind {
        case null, integer, real, text, blob
    }

    fileprivate init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    public func kind(_ column: Int) -> Kind {
        switch sqlite3_column_type(statement, CInt(column)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    public func int64(_ column: Int) -> Int64 {
        sqlite3_column_int64(statement, CInt(column))
    }

    public func double(_ column: Int) -> Double {
        sqlite3_column_double(statement, CInt(column))
    }

    /// Calls `body` with the UTF-8 bytes of a text column (empty for `NULL`), without copying them.
    public func withText<T>(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        // `sqlite3_column_text` first, then `_bytes`, as SQLite asks: the count is of the text form.
        let text = sqlite3_column_text(statement, CInt(column))
        let count = Int(sqlite3_column_bytes(statement, CInt(column)))
        return try body(UnsafeBufferPointer(start: text, count: text == nil ? 0 : count))
    }

    /// The column's value, copied: for the columns a reader does not take raw.
    public func value(_ column: Int) -> DatabaseValue {
        DatabaseValue(sqliteStatement: statement, index: CInt(column))
    }
}

extension Statement {
    /// Runs the statement with `arguments` and calls `body` with each row it gives, read raw (``RawRow``).
    public func forEachRawRow(arguments: StatementArguments, _ body: (RawRow) throws -> Void) throws {
        let cursor = try Row.fetchCursor(self, arguments: arguments)
        let row = RawRow(sqliteStatement)
        while try cursor.next() != nil {
            try body(row)
        }
    }
}
