import FerryCore
import Foundation
import PostgresNIO

/// Reading and writing one collection row generically, whatever its fields.
extension PostgresStorage {
    /// Rows of `collection` matching `condition`, each column read in PostgreSQL's binary form and put in wire form.
    ///
    /// Reading the columns themselves, rather than one `row_to_json` text per row, spares parsing every row as JSON:
    /// that parse was half the server's time in a pull.
    static func fetchRecords(
        _ connection: PostgresConnection, _ collection: CollectionDefinition, where condition: String, binds: PostgresBindings,
        logger: Logger, forWire: Bool = false
    ) async throws -> [(id: UUID, seq: Int64, record: StoredRecord)] {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: selectRecords(collection, where: condition), binds: binds), logger: logger)
        var records: [(id: UUID, seq: Int64, record: StoredRecord)] = []
        for try await row in rows {
            if let found = try storedRecord(row, collection: collection, forWire: forWire) { records.append(found) }
        }
        return records
    }

    /// The query ``fetchRecords(_:_:where:binds:logger:forWire:)`` runs.
    static func selectRecords(_ collection: CollectionDefinition, where condition: String) -> String {
        "SELECT \(recordColumns(collection)) FROM \(SQLDialect.postgres.quote(collection.name)) WHERE \(condition)"
    }

    /// The select list ``storedRecord(_:collection:forWire:)`` reads: the sync columns, then each field's column, cast where
    /// PostgreSQL's JSON rendering is the one ``SQLDialect/wireValue(rendered:type:)`` puts in wire form.
    static func recordColumns(_ collection: CollectionDefinition) -> String {
        let fields = collection.fields.map { field in
            let column = SQLDialect.postgres.quote(field.name)
            return switch collection.storedType(of: field) {
            case .text, .integer, .real, .bool, .bytes: column
            case .uuid, .json, .blob: "\(column)::text"
            case .timestamp: "to_json(\(column)) #>> '{}'"
            }
        }
        return (["id", "_space", "_seq", "_clocks::text", "_deleted", "\(SQLDialect.sealedColumn)::text"] + fields).joined(separator: ", ")
    }

    /// One row of ``recordColumns(_:)``.
    static func storedRecord(_ row: PostgresRow, collection: CollectionDefinition, forWire: Bool = false) throws -> (id: UUID, seq: Int64, record: StoredRecord)? {
        var cells = row.makeIterator()
        guard let id = try cells.next()?.decode(UUID?.self), let space = try cells.next()?.decode(UUID?.self),
              let seq = try cells.next()?.decode(Int64?.self)
        else { return nil }
        let clocks = ClockColumn(try cells.next()?.decode(String?.self) ?? "{}", forWire: forWire)
        let isDeleted = try cells.next()?.decode(Bool?.self) ?? false
        let sealed = try cells.next()?.decode(String?.self)
        var fields: [String: JSONValue] = [:]
        fields.reserveCapacity(collection.fields.count)
        for field in collection.fields {
            guard let cell = cells.next() else { break }
            let value = try wireValue(cell, type: collection.storedType(of: field))
            guard !value.isNull || clocks.hasClock(field.name) else { continue }
            fields[field.name] = value
        }
        var state = RecordState(fields: fields, clocks: clocks.parsed, isDeleted: isDeleted)
        state.unseal(sealed.flatMap(JSONValue.init(jsonText:)), in: collection)
        return (id, seq, StoredRecord(space: space, state: state, clocksText: clocks.wireText))
    }

    /// A field's cell, selected as ``recordColumns(_:)`` does, in wire form.
    private static func wireValue(_ cell: PostgresCell, type: FieldType) throws -> JSONValue {
        guard cell.bytes != nil else { return .null }
        let dialect = SQLDialect.postgres
        return switch type {
        case .text, .uuid: .string(try cell.decode(String.self))
        case .integer: .number(Double(try cell.decode(Int64.self)))
        case .real: .number(try cell.decode(Double.self))
        case .bool: .bool(try cell.decode(Bool.self))
        case .bytes: dialect.wireValue(.bytes(Data(try cell.decode(ByteBuffer.self).readableBytesView)), type: type)
        case .json, .blob: dialect.wireValue(.json(try cell.decode(String.self)), type: type)
        case .timestamp: dialect.wireValue(rendered: .string(try cell.decode(String.self)), type: type)
        }
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
