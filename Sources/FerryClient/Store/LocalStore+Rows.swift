import FerryCore
import FerryGRDB
import Foundation
import GRDB

/// Reading and writing collection rows: field values between wire form (JSON) and SQLite columns.
extension LocalStore {
    /// `name` quoted as an SQLite identifier.
    static func quote(_ name: String) -> String { SQLDialect.sqlite.quote(name) }

    /// The row of `id` in `collection`, tombstones included, or `nil`.
    func loadRecord(_ db: Database, _ collection: CollectionDefinition, id: UUID) throws -> LocalRecord? {
        // Cached (one statement per collection and connection): a pull page loads and saves up to 1000 rows, and
        // preparing a statement, with GRDB's authorizer, cost more than running it.
        let statement = try db.cachedStatement(sql: "SELECT * FROM \(Self.quote(collection.name)) WHERE id = ?")
        guard let row = try Row.fetchOne(statement, arguments: [Self.text(id)]) else { return nil }
        return try record(from: row, in: collection)
    }

    /// Rows of `collection` matching `sql` (a `WHERE …` clause or empty), in id order.
    func loadRecords(_ db: Database, _ collection: CollectionDefinition, where sql: String = "", arguments: StatementArguments = []) throws -> [LocalRecord] {
        let query = "SELECT * FROM \(Self.quote(collection.name)) \(sql) ORDER BY id"
        return try Row.fetchAll(db, sql: query, arguments: arguments).map { try record(from: $0, in: collection) }
    }

    /// A row decoded into a record (sync state `.synced`; readers that show it fill it in).
    func record(from row: Row, in collection: CollectionDefinition) throws -> LocalRecord {
        let idText: String = row["id"]
        let spaceText: String = row["_space"]
        guard let id = UUID(wireText: idText), let space = UUID(wireText: spaceText) else {
            throw StoreError(code: .storeFailed, message: "A row of '\(collection.name)' has a malformed id or space.")
        }
        let clocksText: String = row["_clocks"]
        let clocks = ClockMap.clocks(fromText: clocksText) ?? [:]
        var fields: [String: JSONValue] = [:]
        for field in collection.fields {
            let value: DatabaseValue = row[field.name]
            if !value.isNull || clocks[field.name] != nil {
                fields[field.name] = Self.jsonValue(value, for: field, in: collection)
            }
        }
        let updated: String? = row["_updated_at"]
        return LocalRecord(
            collection: collection.name, id: id, space: space, fields: fields, clocks: clocks,
            isDeleted: (row["_deleted"] as Int64? ?? 0) != 0, seq: row["_seq"] as Int64? ?? 0,
            updatedAt: updated.flatMap(Timestamp.parse)
        )
    }

    /// Inserts or replaces the row of `record`, stamped `updatedAt` (``Timestamp`` text; now when `nil`: a page of
    /// pulled rows formats the time once, not per row).
    /// `clocksText`, when given, is `record.clocks` as JSON text (``Change/clocksText``), stored as it is.
    func saveRecord(_ db: Database, _ record: LocalRecord, in collection: CollectionDefinition, updatedAt: String? = nil, clocksText: String? = nil) throws {
        var values: [DatabaseValue] = [
            Self.text(record.id).databaseValue,
            Self.text(record.space).databaseValue,
            record.seq.databaseValue,
            (clocksText ?? ClockMap.text(record.clocks)).databaseValue,
            (record.isDeleted ? 1 : 0).databaseValue,
            (updatedAt ?? Timestamp.format(now())).databaseValue,
        ]
        values.reserveCapacity(values.count + collection.fields.count)
        for field in collection.fields {
            values.append(try Self.databaseValue(record.fields[field.name] ?? .null, for: field, in: collection))
        }
        try db.cachedStatement(sql: upsertSQL(collection)).execute(columns: values)
    }

    /// Compact JSON of a record's fields, keys sorted.
    static func jsonText(_ fields: [String: JSONValue]) -> String {
        JSONValue.object(fields).jsonText
    }

    /// Whether a field is stored as ciphertext bytes (every field of an encrypted collection but the parent link).
    static func isStoredAsBytes(_ field: FieldDefinition, in collection: CollectionDefinition) -> Bool {
        collection.isEncrypted && collection.isSealed(field)
    }

    /// The column value of a wire value (already normalized for its field), by FerryCore's codec, as on the server.
    static func databaseValue(_ value: JSONValue, for field: FieldDefinition, in collection: CollectionDefinition) throws -> DatabaseValue {
        if value.isNull { return .null }
        if isStoredAsBytes(field, in: collection) {
            // Bytes, as on the server; on the device they hold the value's JSON, in clear (records are sealed
            // only on their way out).
            return Data(value.jsonText.utf8).databaseValue
        }
        do {
            return try SQLDialect.sqlite.columnValue(value, type: field.type).databaseValue
        } catch {
            throw StoreError(code: .typeMismatch, message: "\(collection.name).\(field.name): \(error)")
        }
    }

    /// The wire value of a column value.
    static func jsonValue(_ value: DatabaseValue, for field: FieldDefinition, in collection: CollectionDefinition) -> JSONValue {
        if isStoredAsBytes(field, in: collection), case .blob(let data) = value.storage {
            return JSONValue(jsonText: String(decoding: data, as: UTF8.self)) ?? .null
        }
        return SQLDialect.sqlite.wireValue(SQLValue(value), type: field.type)
    }
}
