import FerryCore
import Foundation
import PostgresNIO

/// Reading and writing one collection row generically, whatever its fields.
extension PostgresStorage {
    /// Rows of `collection` matching `condition`, read as JSON (`row_to_json`) so any set of columns decodes one way.
    static func fetchRecords(
        _ connection: PostgresConnection, _ collection: CollectionDefinition, where condition: String, binds: PostgresBindings,
        logger: Logger
    ) async throws -> [(id: UUID, seq: Int64, record: StoredRecord)] {
        // The alias starts with `_`, which no field name may: a field named `t` would otherwise shadow the row.
        let sql = "SELECT row_to_json(_row)::text FROM (SELECT * FROM \(SQLDialect.postgres.quote(collection.name)) WHERE \(condition)) _row"
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        var records: [(id: UUID, seq: Int64, record: StoredRecord)] = []
        for try await text in rows.decode(String.self) {
            if let found = storedRecord(jsonText: text, collection: collection) { records.append(found) }
        }
        return records
    }

    static func storedRecord(jsonText: String, collection: CollectionDefinition) -> (id: UUID, seq: Int64, record: StoredRecord)? {
        guard let object = JSONValue(jsonText: jsonText)?.objectValue,
              let id = object["id"]?.stringValue.flatMap(UUID.init(wireText:)),
              let space = object["_space"]?.stringValue.flatMap(UUID.init(wireText:)),
              case .number(let seq)? = object["_seq"]
        else { return nil }
        let clocks = (object["_clocks"]?.objectValue ?? [:]).compactMapValues { $0.stringValue.flatMap(HLC.init) }
        var fields: [String: JSONValue] = [:]
        for field in collection.fields {
            let value = object[field.name] ?? .null
            guard clocks[field.name] != nil || !value.isNull else { continue }
            fields[field.name] = wireValue(value, type: collection.storedType(of: field))
        }
        var state = RecordState(fields: fields, clocks: clocks, isDeleted: object["_deleted"] == .bool(true))
        state.unseal(object[SQLDialect.sealedColumn], in: collection)
        return (id, Int64(seq), StoredRecord(space: space, state: state))
    }

    /// Writes rows of one collection with one multi-row upsert.
    static func writeRecords(
        _ connection: PostgresConnection, _ collection: CollectionDefinition, _ rows: [(write: PushPlan.Write, seq: Int64)], now: Date,
        sealedSpaces: Set<UUID>, logger: Logger
    ) async throws {
        guard !rows.isEmpty else { return }
        var bindings = PostgresBindings()
        var tuples: [String] = []
        for (write, seq) in rows {
            var placeholders: [String] = []
            func next(_ cast: String = "") -> String { "$\(bindings.count)\(cast)" }
            bindings.append(write.key.id); placeholders.append(next())
            bindings.append(write.record.space); placeholders.append(next())
            bindings.append(seq); placeholders.append(next())
            bindings.append(ClockCoding.encode(write.record.state.clocks)); placeholders.append(next("::jsonb"))
            bindings.append(write.record.state.isDeleted); placeholders.append(next())
            bindings.append(now); placeholders.append(next())
            let (typed, sealed) = write.record.storageValues(in: collection, isSealed: sealedSpaces.contains(write.record.space))
            if let sealed { bindings.append(sealed) } else { bindings.appendNull() }
            placeholders.append(next("::jsonb"))
            for field in collection.fields {
                placeholders.append(try bind(typed[field.name] ?? .null, type: collection.storedType(of: field), into: &bindings))
            }
            tuples.append("(" + placeholders.joined(separator: ", ") + ")")
        }
        let quoted = (["id", "_space", "_seq", "_clocks", "_deleted", "_updated_at", SQLDialect.sealedColumn] + collection.fields.map(\.name)).map { SQLDialect.postgres.quote($0) }
        let updates = quoted.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let sql = """
            INSERT INTO \(SQLDialect.postgres.quote(collection.name)) (\(quoted.joined(separator: ", ")))
            VALUES \(tuples.joined(separator: ", "))
            ON CONFLICT (id) DO UPDATE SET \(updates)
            """
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
    }
}
