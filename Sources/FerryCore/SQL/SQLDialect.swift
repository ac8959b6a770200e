/// The SQL engines Ferry stores collections in, and how each spells a collection's table.
///
/// The server uses both; the client's local store uses ``sqlite``. Keeping the DDL here means
/// a device's tables and the server's have the same columns by construction.
public enum SQLDialect: String, Sendable, CaseIterable {
    /// SQLite (the embedded default on the server, and every device's local store).
    case sqlite
    /// PostgreSQL.
    case postgres

    /// `name` quoted as an identifier. Names are validated by ``Identifier`` first,
    /// so quoting is for reserved words, not for escaping.
    public func quote(_ name: String) -> String {
        // Every write builds its statement's text from quoted names: the usual name, without a quote, is one append.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// The column type that stores values of `type`.
    public func columnType(for type: FieldType) -> String {
        switch (self, type) {
        case (.sqlite, .text), (.sqlite, .timestamp), (.sqlite, .uuid), (.sqlite, .json), (.sqlite, .blob): "TEXT"
        case (.sqlite, .integer), (.sqlite, .bool): "INTEGER"
        case (.sqlite, .real): "REAL"
        case (.sqlite, .bytes): "BLOB"
        case (.postgres, .text): "text"
        case (.postgres, .integer): "bigint"
        case (.postgres, .real): "double precision"
        case (.postgres, .bool): "boolean"
        case (.postgres, .timestamp): "timestamptz"
        case (.postgres, .uuid): "uuid"
        case (.postgres, .json), (.postgres, .blob): "jsonb"
        case (.postgres, .bytes): "bytea"
        }
    }

    /// The type a field's column has in `collection`: in an encrypted collection every field but
    /// the parent link holds ciphertext, so it is stored as bytes and its declared type is checked on the device.
    public func storageType(for field: FieldDefinition, in collection: CollectionDefinition) -> String {
        columnType(for: collection.isEncrypted && collection.isSealed(field) ? .bytes : field.type)
    }

    /// The reserved sync columns every collection table starts with.
    var reservedColumnDefinitions: [String] {
        switch self {
        case .sqlite:
            [
                "\"id\" TEXT PRIMARY KEY NOT NULL",
                "\"_space\" TEXT NOT NULL",
                "\"_seq\" INTEGER NOT NULL",
                "\"_clocks\" TEXT NOT NULL DEFAULT '{}'",
                "\"_deleted\" INTEGER NOT NULL DEFAULT 0",
                "\"_updated_at\" TEXT NOT NULL",
                sealedColumnDefinition,
            ]
        case .postgres:
            [
                "\"id\" uuid PRIMARY KEY",
                "\"_space\" uuid NOT NULL",
                "\"_seq\" bigint NOT NULL",
                // Text, not jsonb: only Ferry reads it, and jsonb cost a parse on every write and an escape of every
                // character on every read (a sixth of PostgreSQL's work in a pull).
                "\"_clocks\" text NOT NULL DEFAULT '{}'",
                "\"_deleted\" boolean NOT NULL DEFAULT false",
                "\"_updated_at\" timestamptz NOT NULL DEFAULT now()",
                sealedColumnDefinition,
            ]
        }
    }

    /// The column that holds a record's encrypted field values in an end-to-end encrypted space, as one JSON
    /// object of field name to `{"keyVersion", "ciphertext"}`; the typed columns stay `NULL` there. Only the server
    /// uses it: a device's local store has the column (same DDL) and never reads or writes it.
    public var sealedColumnDefinition: String {
        "\(quote(Self.sealedColumn)) \(self == .sqlite ? "TEXT" : "jsonb")"
    }

    /// The name of the column described by ``sealedColumnDefinition``.
    public static let sealedColumn = "_sealed"

    /// The sync columns every collection table starts with, in the order every reader of a row by position expects:
    /// the record's id, its space, its commit sequence, its clocks and its tombstone flag.
    public static let syncColumns = ["id", "_space", "_seq", "_clocks", "_deleted"]
    /// When a device last changed the row; written with the row, read only by the device's own store.
    public static let updatedAtColumn = "_updated_at"

    /// The condition that keeps tombstones out of unique indexes, so a deleted record frees its key.
    package var liveRowCondition: String {
        switch self {
        case .sqlite: "\"_deleted\" = 0"
        case .postgres: "NOT \"_deleted\""
        }
    }

    /// The `STRICT` suffix makes SQLite check column types as PostgreSQL does.
    var tableOptions: String {
        self == .sqlite ? " STRICT" : ""
    }
}
