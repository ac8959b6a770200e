import FerryCore
import FerryGRDB
import Foundation
import GRDB

extension SQLiteStorage {
    public func profile(userID: UUID, collection: CollectionDefinition) async throws -> [String: JSONValue]? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT * FROM profiles WHERE id = ? AND _deleted = 0", arguments: [userID.databaseText]
            ) else { return nil }
            var fields: [String: JSONValue] = [:]
            for field in collection.fields {
                fields[field.name] = Self.jsonValue(row[field.name] as DatabaseValue, type: field.type)
            }
            return fields
        }
    }

    @discardableResult
    public func saveProfile(userID: UUID, collection: CollectionDefinition, fields: [String: JSONValue], now: Date) async throws -> Int64 {
        let names = fields.keys.filter { collection.field(named: $0) != nil }.sorted()
        let quoted = names.map { SQLDialect.sqlite.quote($0) }
        var fieldArguments: StatementArguments = [userID.databaseText, userID.databaseText]
        for name in names {
            guard let field = collection.field(named: name), let value = fields[name] else { continue }
            fieldArguments += [try Self.databaseValue(value, type: field.type)]
        }
        let leadingArguments = fieldArguments
        let clocks = ClockMap.text(Dictionary(uniqueKeysWithValues: names.map { ($0, HLC.server(now)) }))
        let updates = (["_seq = excluded._seq", "_updated_at = excluded._updated_at", "_deleted = 0", "_clocks = json_patch(profiles._clocks, excluded._clocks)"]
            + quoted.map { "\($0) = excluded.\($0)" }).joined(separator: ", ")
        return try await pool.write { db in
            let seq = try Int64.fetchOne(
                db, sql: "UPDATE ferry_spaces SET seq = seq + 1, changed_at = ? WHERE id = ? RETURNING seq", arguments: [now, userID.databaseText]
            ) ?? 0
            let arguments = leadingArguments + [seq, Timestamp.format(now), clocks]
            try db.execute(
                sql: """
                    INSERT INTO profiles (id, _space, \(quoted.map { $0 + ", " }.joined())_seq, _updated_at, _clocks)
                    VALUES (?, ?, \(names.map { _ in "?, " }.joined())?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET \(updates)
                    """,
                arguments: arguments
            )
            return seq
        }
    }

    public func deleteProfile(userID: UUID, now: Date) async throws {
        try await pool.write { db in
            let seq = try Int64.fetchOne(
                db, sql: "UPDATE ferry_spaces SET seq = seq + 1, changed_at = ? WHERE id = ? RETURNING seq", arguments: [now, userID.databaseText]
            ) ?? 0
            try db.execute(
                sql: "UPDATE profiles SET _deleted = 1, _seq = ?, _updated_at = ? WHERE id = ?",
                arguments: [seq, Timestamp.format(now), userID.databaseText]
            )
        }
    }

    /// A column value in wire form.
    static func jsonValue(_ value: DatabaseValue, type: FieldType) -> JSONValue {
        SQLDialect.sqlite.wireValue(SQLValue(value), type: type)
    }

    /// A normalized wire value as the column stores it.
    static func databaseValue(_ value: JSONValue, type: FieldType) throws -> DatabaseValue {
        try SQLDialect.sqlite.columnValue(value, type: type).databaseValue
    }
}
