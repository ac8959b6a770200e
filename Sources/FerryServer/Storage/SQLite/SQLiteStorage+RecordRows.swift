import FerryCore
import FerryGRDB
import Foundation
import GRDB

/// Reading and writing one collection row generically, whatever its fields.
extension SQLiteStorage {
    /// The columns ``storedRecord(_:collection:forWire:)`` reads, in its order: read by position, since a lookup by name
    /// lowercases and compares every column name (a tenth of a pull's server time).
    static func recordColumns(_ collection: CollectionDefinition) -> String {
        (SQLDialect.syncColumns + [SQLDialect.sealedColumn] + collection.fields.map(\.name))
            .map { SQLDialect.sqlite.quote($0) }.joined(separator: ", ")
    }

    /// One row of ``recordColumns(_:)``; `forWire` keeps its clocks as text for a pull reply (``StoredRecord/clocksText``).
    static func storedRecord(_ row: Row, collection: CollectionDefinition, forWire: Bool = false) -> (id: UUID, seq: Int64, record: StoredRecord)? {
        guard let id = UUID(wireText: row[0]), let space = UUID(wireText: row[1]) else { return nil }
        let clocks = ClockColumn(row[3], forWire: forWire)
        var fields: [String: JSONValue] = [:]
        fields.reserveCapacity(collection.fields.count)
        for (index, field) in collection.fields.enumerated() {
            let value = row[6 + index] as DatabaseValue
            guard !value.isNull || clocks.hasClock(field.name) else { continue }
            fields[field.name] = jsonValue(value, type: collection.storedType(of: field))
        }
        let state = clocks.state(fields: fields, isDeleted: row[4], sealed: row[5], in: collection)
        return (id, row[2], StoredRecord(space: space, state: state, clocksText: clocks.wireText))
    }

    /// The select list ``appendTableRecord(_:collection:types:to:)`` reads: what a table request shows of a row.
    static func tableColumns(_ collection: CollectionDefinition) -> String {
        (["id", "_space", SQLDialect.sealedColumn] + collection.fields.map(\.name)).map { SQLDialect.sqlite.quote($0) }.joined(separator: ", ")
    }

    /// Appends one row of ``tableColumns(_:)`` to `records`, each value written from SQLite's bytes into the JSON a
    /// reply shows, as ``jsonValue(_:type:)`` reads it (a page of a thousand rows built no value per cell).
    static func appendTableRecord(_ row: RawRow, collection: CollectionDefinition, types: [FieldType], to records: inout TableRecords) {
        guard row.kind(0) == .text, row.kind(1) == .text else { return }
        records.appendCell { json in row.withText(0) { JSONValue.write(utf8: $0, into: &json) } }
        records.appendCell { json in row.withText(1) { JSONValue.write(utf8: $0, into: &json) } }
        let sealed = row.kind(2) == .null ? nil : row.withText(2) { String(decoding: $0, as: UTF8.self) }
        records.appendFields(of: collection, sealed: sealed) { index, json in
            writeJSON(row, column: 3 + index, type: types[index], into: &json)
        }
    }

    /// A column's value as JSON, straight from SQLite for the common kinds; the rest (JSON, blob references, bytes, a
    /// timestamp of another shape) through ``jsonValue(_:type:)``, the one rule for them.
    private static func writeJSON(_ row: RawRow, column: Int, type: FieldType, into json: inout [UInt8]) {
        switch (row.kind(column), type) {
        case (.null, _): JSONValue.null.write(into: &json)
        case (.integer, .bool): JSONValue.bool(row.int64(column) != 0).write(into: &json)
        case (.integer, _): JSONValue.write(Double(row.int64(column)), into: &json)
        case (.real, _): JSONValue.write(row.double(column), into: &json)
        case (.text, .text), (.text, .uuid), (.text, .integer), (.text, .real), (.text, .bool):
            row.withText(column) { JSONValue.write(utf8: $0, into: &json) }
        case (.text, .timestamp) where row.withText(column, Timestamp.hasCanonicalShape(utf8:)):
            row.withText(column) { JSONValue.write(utf8: $0, into: &json) }
        default:
            jsonValue(row.value(column), type: type).write(into: &json)
        }
    }

    /// Writes `row` (of ``recordColumns(_:)``) into a pull reply with `writer`, straight from its columns, whose stored
    /// `types` are given; `false`, writing nothing, for a row with sealed values or clocks the writer does not copy,
    /// which the caller reads through ``storedRecord(_:collection:forWire:)``.
    static func writeChange(_ row: Row, types: [FieldType], writer: ChangeRowWriter, into changes: inout WireChanges) -> Bool {
        guard (row[5] as DatabaseValue).isNull, let id = UUID(wireText: row[0]), let space = UUID(wireText: row[1]),
              var clocks = row[3] as String?
        else { return false }
        let (seq, deleted): (Int64, Bool) = (row[2], row[4])
        let values = types.indices.map { jsonValue(row[6 + $0], type: types[$0]) }
        return clocks.withUTF8 { text in
            changes.append(seq: seq, writer: writer) { json in
                writer.write(
                    id: id, space: space, seq: seq, deleted: deleted, clocks: UnsafeRawBufferPointer(text), isNull: { values[$0].isNull },
                    writeValue: { index, json in values[index].write(into: &json) }, into: &json
                )
            }
        }
    }

    static func fetchRecords(
        _ db: Database, _ collection: CollectionDefinition, where condition: String, arguments: StatementArguments, forWire: Bool = false
    ) throws -> [(id: UUID, seq: Int64, record: StoredRecord)] {
        try Array(recordCursor(db, collection, where: condition, arguments: arguments).compactMap { storedRecord($0, collection: collection, forWire: forWire) })
    }

    /// The rows of ``recordColumns(_:)`` of `collection` matching `condition`, one at a time.
    static func recordCursor(_ db: Database, _ collection: CollectionDefinition, where condition: String, arguments: StatementArguments) throws -> RowCursor {
        let sql = "SELECT \(recordColumns(collection)) FROM \(SQLDialect.sqlite.quote(collection.name)) WHERE \(condition)"
        return try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The values of `write`'s row in the order of ``upsertText(_:)``'s columns, stamped `updatedAt` (``Timestamp``
    /// text, formatted once per push); its sequence number (at ``seqColumn``) is the writer's to set.
    static func rowValues(_ write: PushPlan.Write, updatedAt: String, isSealed: Bool) throws -> [DatabaseValue] {
        let collection = write.collection
        let (typed, sealed) = write.record.storageValues(in: collection, isSealed: isSealed)
        var values: [DatabaseValue] = [
            write.key.id.databaseText.databaseValue, write.record.space.databaseText.databaseValue, DatabaseValue.null,
            ClockCoding.encode(write.record.state).databaseValue, write.record.state.isDeleted.databaseValue,
            updatedAt.databaseValue, sealed.databaseValue,
        ]
        values.reserveCapacity(values.count + collection.fields.count)
        for field in collection.fields {
            values.append(try databaseValue(typed[field.name] ?? .null, type: collection.storedType(of: field)))
        }
        return values
    }

    /// Where ``rowValues(_:updatedAt:isSealed:)`` leaves the sequence number.
    static let seqColumn = 2

    /// The statement that upserts a row of `collection` from its ``rowValues(_:updatedAt:isSealed:)``
    /// (`execute(columns:)`). One per collection, prepared once per connection: a push writes up to 1000 rows, and
    /// preparing (with GRDB's authorizer) cost more than running.
    static func upsertStatement(_ db: Database, _ collection: CollectionDefinition) throws -> Statement {
        try db.cachedStatement(sql: upsertTexts.text(for: collection, build: upsertText))
    }

    private static let upsertTexts = StatementTextCache()

    private static func upsertText(_ collection: CollectionDefinition) -> String {
        let columns = SQLDialect.syncColumns + [SQLDialect.updatedAtColumn, SQLDialect.sealedColumn] + collection.fields.map(\.name)
        let quoted = columns.map { SQLDialect.sqlite.quote($0) }
        let updates = quoted.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return """
            INSERT INTO \(SQLDialect.sqlite.quote(collection.name)) (\(quoted.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            ON CONFLICT (id) DO UPDATE SET \(updates)
            """
    }
}
