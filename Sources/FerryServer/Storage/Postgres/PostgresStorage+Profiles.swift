import FerryCore
import Foundation
import NIOCore
import PostgresNIO

extension PostgresStorage {
    public func profile(userID: UUID, collection: CollectionDefinition) async throws -> [String: JSONValue]? {
        // row_to_json turns every column into JSON in one round trip (with no limit on the number of fields);
        // types are then put in wire form.
        let columns = (["id"] + collection.fields.map { SQLDialect.postgres.quote($0.name) }).joined(separator: ", ")
        let rows = try await client.query(
            "SELECT row_to_json(_row)::text FROM (SELECT \(unescaped: columns) FROM profiles WHERE id = \(userID) AND NOT _deleted) _row",
            logger: logger
        )
        for try await text in rows.decode(String.self) {
            let object = JSONValue(jsonText: text)?.objectValue ?? [:]
            var fields: [String: JSONValue] = [:]
            for field in collection.fields {
                fields[field.name] = Self.wireValue(object[field.name] ?? .null, type: field.type)
            }
            return fields
        }
        return nil
    }

    @discardableResult
    public func saveProfile(userID: UUID, collection: CollectionDefinition, fields: [String: JSONValue], now: Date) async throws -> Int64 {
        let names = fields.keys.filter { collection.field(named: $0) != nil }.sorted()
        let quoted = names.map { SQLDialect.postgres.quote($0) }
        var bindings = PostgresBindings()
        bindings.append(userID)
        var placeholders: [String] = []
        for name in names {
            guard let field = collection.field(named: name), let value = fields[name] else { continue }
            placeholders.append(try Self.bind(value, type: field.type, into: &bindings))
        }
        bindings.append(ClockMap.text(Dictionary(uniqueKeysWithValues: names.map { ($0, HLC.server(now)) })))
        let clocksPlaceholder = "$\(bindings.count)"
        let merged = "(profiles._clocks::jsonb || excluded._clocks::jsonb)::text"
        let updates = (["_seq = excluded._seq", "_updated_at = excluded._updated_at", "_deleted = false", "_clocks = \(merged)"]
            + quoted.map { "\($0) = excluded.\($0)" }).joined(separator: ", ")
        let sql = """
            WITH space AS (UPDATE ferry_spaces SET seq = seq + 1, changed_at = now() WHERE id = $1 RETURNING seq)
            INSERT INTO profiles (id, _space, \(quoted.map { $0 + ", " }.joined())_seq, _updated_at, _clocks)
            SELECT $1, $1, \(placeholders.map { $0 + ", " }.joined())space.seq, now(), \(clocksPlaceholder) FROM space
            ON CONFLICT (id) DO UPDATE SET \(updates)
            RETURNING _seq
            """
        // Read to the end: the statement has committed only once its rows are all in.
        var stored: Int64 = 0
        for try await seq in try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).decode(Int64.self) {
            stored = seq
        }
        return stored
    }

    public func deleteProfile(userID: UUID, now: Date) async throws {
        try await client.query(
            """
            WITH space AS (UPDATE ferry_spaces SET seq = seq + 1, changed_at = \(now) WHERE id = \(userID) RETURNING seq)
            UPDATE profiles SET _deleted = true, _seq = space.seq, _updated_at = \(now) FROM space WHERE profiles.id = \(userID)
            """,
            logger: logger
        )
    }

    /// Appends `value` as its column type and returns its placeholder (with a cast where the type needs one).
    static func bind(_ value: JSONValue, type: FieldType, into bindings: inout PostgresBindings) throws -> String {
        bind(try SQLDialect.postgres.columnValue(value, type: type), type: type, into: &bindings)
    }

    /// Appends a column value and returns its placeholder (with a cast where the type needs one).
    static func bind(_ value: SQLValue, type: FieldType, into bindings: inout PostgresBindings) -> String {
        let placeholder = "$\(bindings.count + 1)"
        switch value {
        case .null:
            bindings.appendNull()
            return "\(placeholder)::\(SQLDialect.postgres.columnType(for: type))"
        case .json(let text):
            bindings.append(text)
            return "\(placeholder)::jsonb"
        case .integer(let number): bindings.append(number)
        case .real(let number): bindings.append(number)
        case .bool(let flag): bindings.append(flag)
        case .timestamp(let date): bindings.append(date)
        case .uuid(let uuid): bindings.append(uuid)
        case .bytes(let data): bindings.append(ByteBuffer(bytes: data))
        case .text(let text): bindings.append(text)
        }
        return placeholder
    }

    /// PostgreSQL's JSON rendering of a column, in Ferry's wire form.
    static func wireValue(_ value: JSONValue, type: FieldType) -> JSONValue {
        SQLDialect.postgres.wireValue(rendered: value, type: type)
    }
}
