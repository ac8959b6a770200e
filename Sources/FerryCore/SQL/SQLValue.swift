import Foundation

/// A column value as an SQL driver binds or reads it, whatever the engine: what ``SQLDialect/columnValue(_:type:)``
/// makes of a wire value, and what ``SQLDialect/wireValue(_:type:)`` reads back.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes(Data)
    /// PostgreSQL `boolean` (SQLite stores booleans as integers).
    case bool(Bool)
    /// PostgreSQL `timestamptz` (SQLite stores the canonical ISO 8601 text).
    case timestamp(Date)
    /// PostgreSQL `uuid` (SQLite stores the lowercase text).
    case uuid(UUID)
    /// PostgreSQL `jsonb`, as JSON text (SQLite stores the text).
    case json(String)
}

/// A wire value that a column of its field's type cannot hold: refused, never replaced by an invented value.
public struct ColumnValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The column's type.
    public var type: FieldType
    /// What was wrong.
    public var message: String

    public var description: String { "a \(type.rawValue) column cannot hold \(message)" }
}
