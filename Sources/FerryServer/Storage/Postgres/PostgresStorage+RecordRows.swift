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
        (SQLDialect.syncColumns + ["\(SQLDialect.sealedColumn)::text"] + fieldColumns(collection)).joined(separator: ", ")
    }

    /// Each field's column, cast where PostgreSQL's JSON rendering is the one ``SQLDialect/wireValue(rendered:type:)``
    /// puts in wire form.
    static func fieldColumns(_ collection: CollectionDefinition) -> [String] {
        collection.fields.map { field in
            let column = SQLDialect.postgres.quote(field.name)
            return switch collection.storedType(of: field) {
            case .text, .integer, .real, .bool, .bytes: column
            case .uuid, .json, .blob: "\(column)::text"
            case .timestamp: "to_json(\(column)) #>> '{}'"
            }
        }
    }

    /// The select list ``appendTableRecord(_:collection:to:)`` reads: what a table request shows of a row.
    static func tableColumns(_ collection: CollectionDefinition) -> String {
        (["id::text", "_space::text", "\(SQLDialect.sealedColumn)::text"] + fieldColumns(collection)).joined(separator: ", ")
    }

    /// Appends one row of ``tableColumns(_:)`` to `records`, its values as the JSON a reply shows.
    static func appendTableRecord(_ row: PostgresRow, collection: CollectionDefinition, to records: inout TableRecords) throws {
        var cells = row.makeIterator()
        guard let id = try cells.next()?.decode(String?.self), let space = try cells.next()?.decode(String?.self) else { return }
        let sealed = try cells.next()?.decode(String?.self)
        var values: [JSONValue] = []
        values.reserveCapacity(collection.fields.count)
        for field in collection.fields {
            guard let cell = cells.next() else { break }
            values.append(try wireValue(cell, type: collection.storedType(of: field)))
        }
        records.appendCell { JSONValue.write(id, into: &$0) }
        records.appendCell { JSONValue.write(space, into: &$0) }
        records.appendFields(of: collection, sealed: sealed) { index, json in
            (index < values.count ? values[index] : .null).write(into: &json)
        }
    }

    /// One row of ``recordColumns(_:)``.
    static func storedRecord(_ row: PostgresRow, collection: CollectionDefinition, forWire: Bool = false) throws -> (id: UUID, seq: Int64, record: StoredRecord)? {
        var cells = row.makeIterator()
        return try storedRecord(&cells, collection: collection, forWire: forWire)
    }

    /// The columns of ``recordColumns(_:)``, one cell each, read from `cells`.
    static func storedRecord(
        _ cells: inout some IteratorProtocol<PostgresCell>, collection: CollectionDefinition, forWire: Bool = false
    ) throws -> (id: UUID, seq: Int64, record: StoredRecord)? {
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
        let state = clocks.state(fields: fields, isDeleted: isDeleted, sealed: sealed, in: collection)
        return (id, seq, StoredRecord(space: space, state: state, clocksText: clocks.wireText))
    }

    /// The changes of the rows of `collection` matching `condition`, written into a pull reply's JSON straight from
    /// their bytes by `writer`; a row the writer refuses (sealed values, clocks in another form) goes through
    /// ``storedRecord(_:collection:forWire:)`` and a ``Change``.
    ///
    /// Each row is selected as one record of ``recordColumns(_:)`` (``PostgresRecordCells``). Rows stop once this
    /// collection's changes spent more than `budget` bytes (``WireChanges/spent(_:since:)``).
    static func writeChanges(
        _ connection: PostgresConnection, _ collection: CollectionDefinition, where condition: String, binds: PostgresBindings,
        writer: ChangeRowWriter, into changes: inout WireChanges, budget: Int, logger: Logger
    ) async throws {
        let sql = "SELECT ROW(\(recordColumns(collection))) FROM \(SQLDialect.postgres.quote(collection.name)) WHERE \(condition)"
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        let types = collection.fields.map { collection.storedType(of: $0) }
        let fieldStart = 6
        var record = PostgresRecordCells(capacity: fieldStart + types.count)
        var fields: [WireCell] = []
        fields.reserveCapacity(types.count)
        var decoded: [JSONValue] = []
        let start = changes.byteCount
        for try await row in rows {
            if changes.spent(budget, since: start) { break }
            let buffer = try row.decode(ByteBuffer.self)
            let written = try buffer.withUnsafeReadableBytes { bytes in
                guard record.read(bytes, count: fieldStart + types.count) else { throw RecordFormError() }
                guard let id = record.bytes(0, in: bytes).flatMap(Self.uuid), let space = record.bytes(1, in: bytes).flatMap(Self.uuid),
                      let seq = record.bytes(2, in: bytes).flatMap(PostgresRecordCells.int64), let clocks = record.bytes(3, in: bytes),
                      let deleted = record.bytes(4, in: bytes), deleted.count == 1, record.bytes(5, in: bytes) == nil
                else { return false }
                fields.removeAll(keepingCapacity: true)
                decoded.removeAll(keepingCapacity: true)
                for (index, type) in types.enumerated() {
                    let column = fieldStart + index
                    fields.append(try WireCell(record.bytes(column, in: bytes), type: type, decoded: &decoded) { record.cell(column, of: buffer) })
                }
                return changes.append(seq: seq, writer: writer) { json in
                    writer.write(
                        id: id, space: space, seq: seq, deleted: deleted[0] != 0, clocks: clocks, isNull: { fields[$0].isNull(decoded) },
                        writeValue: { index, json in fields[index].write(decoded, into: &json) }, into: &json
                    )
                }
            }
            guard !written else { continue }
            var cells = record.cells.indices.map { record.cell($0, of: buffer) }.makeIterator()
            if let found = try storedRecord(&cells, collection: collection, forWire: true) {
                changes.append(Change(space: found.record.space, collection: collection.name, id: found.id, seq: found.seq, record: found.record), with: writer)
            }
        }
    }

    /// A record whose bytes are not the columns asked for: PostgreSQL answered another query than the one sent.
    struct RecordFormError: Error {}

    private static func uuid(_ bytes: UnsafeRawBufferPointer) -> UUID? {
        bytes.count == 16 ? UUID(uuid: bytes.loadUnaligned(as: uuid_t.self)) : nil
    }

    /// A field's cell as a pull writes it: the bytes of text and of PostgreSQL's binary `bigint`, `double precision` and
    /// `boolean`, read in place (valid while the record's bytes are); any other type (or an unexpected size) decoded
    /// from its `cell` as ``wireValue(_:type:)`` does, kept in the row's `decoded` values. A plain struct rather than
    /// an enum with a ``JSONValue`` case: such an enum's copies and switches went through the runtime, a twentieth of
    /// a pull.
    private struct WireCell {
        enum Kind { case null, text, integer, real, bool, decoded }
        var kind: Kind
        var text = UnsafeRawBufferPointer(start: nil, count: 0)
        /// The integer, the double's bits, the bool (0 or 1), or the index in `decoded`.
        var bits: UInt64 = 0

        init(_ bytes: UnsafeRawBufferPointer?, type: FieldType, decoded: inout [JSONValue], cell: () -> PostgresCell) throws {
            guard let bytes else {
                kind = .null
                return
            }
            switch (type, bytes.count) {
            case (.text, _), (.uuid, _): (kind, text) = (.text, bytes)
            case (.integer, 8): (kind, bits) = (.integer, UInt64(bitPattern: PostgresRecordCells.int64(bytes)!))
            case (.real, 8): (kind, bits) = (.real, UInt64(bitPattern: PostgresRecordCells.int64(bytes)!))
            case (.bool, 1): (kind, bits) = (.bool, bytes[0] != 0 ? 1 : 0)
            default:
                (kind, bits) = (.decoded, UInt64(decoded.count))
                decoded.append(try PostgresStorage.wireValue(cell(), type: type))
            }
        }

        func isNull(_ decoded: [JSONValue]) -> Bool {
            switch kind {
            case .null: true
            case .decoded: decoded[Int(bits)].isNull
            default: false
            }
        }

        func write(_ decoded: [JSONValue], into bytes: inout [UInt8]) {
            switch kind {
            case .null: JSONValue.null.write(into: &bytes)
            case .text: JSONValue.write(utf8: text.assumingMemoryBound(to: UInt8.self), into: &bytes)
            case .integer: JSONValue.write(Double(Int64(bitPattern: bits)), into: &bytes)
            case .real: JSONValue.write(Double(bitPattern: bits), into: &bytes)
            case .bool: JSONValue.bool(bits != 0).write(into: &bytes)
            case .decoded: decoded[Int(bits)].write(into: &bytes)
            }
        }
    }

    /// A field's cell, selected as ``recordColumns(_:)`` does, in wire form.
    fileprivate static func wireValue(_ cell: PostgresCell, type: FieldType) throws -> JSONValue {
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

    /// Writes rows of one collection with one statement, whatever their number: each column is one array parameter
    /// (``PostgresColumnArray``), so the statement's text, parse and plan do not grow with the rows. Rows the push's
    /// plan found stored are upserted; rows it found nowhere are inserted alone (`isNew`), which spares the conflict
    /// check (a tenth of the write) and turns an id another space took meanwhile into an error rather than a move.
    static func writeRecords(
        _ connection: PostgresConnection, _ columns: RecordColumns, seqs: [Int64], isNew: Bool, now: Date, logger: Logger
    ) async throws {
        guard !seqs.isEmpty else { return }
        var seqColumn = PostgresColumnArray(.integer, capacity: seqs.count)
        for seq in seqs { seqColumn.append(seq) }
        var bindings = PostgresBindings()
        bindings.append(now)
        for column in [columns.ids, columns.spaces, seqColumn, columns.clocks, columns.deleted, columns.sealed] + columns.fields {
            bindings.append(column)
        }
        let collection = columns.collection
        let texts = isNew ? insertTexts : upsertTexts
        let sql = texts.text(for: collection) { writeText($0, upsert: !isNew) }
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
    }

    private static let upsertTexts = StatementTextCache()
    private static let insertTexts = StatementTextCache()

    /// `$1` the time of the write; `$2`… one array per column of ``RecordColumns``, `_seq` third.
    ///
    /// The arrays are unnested in the select list, where PostgreSQL steps through them together (all are as long as the
    /// rows), row by row. `FROM unnest($2, $3, …)` first copied every row into a tuple store and read it back: a
    /// quarter more of PostgreSQL's time in the insert.
    private static func writeText(_ collection: CollectionDefinition, upsert: Bool) -> String {
        let fieldElements = collection.fields.map { PostgresColumnArray.Element(collection.storedType(of: $0)) }
        let names = SQLDialect.syncColumns + [SQLDialect.sealedColumn] + collection.fields.map(\.name)
        let elements: [PostgresColumnArray.Element] = [.uuid, .uuid, .integer, .text, .bool, .json] + fieldElements
        let values = elements.indices.map { "unnest($\($0 + 2)::\(elements[$0].sqlArrayType))" + (elements[$0] == .json ? "::jsonb" : "") }
        let quoted = names.map { SQLDialect.postgres.quote($0) } + [SQLDialect.postgres.quote("_updated_at")]
        let updates = quoted.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return """
            INSERT INTO \(SQLDialect.postgres.quote(collection.name)) (\(quoted.joined(separator: ", ")))
            SELECT \(values.joined(separator: ", ")), $1
            """ + (upsert ? "\nON CONFLICT (id) DO UPDATE SET \(updates)" : "")
    }
}
