import FerryCore
import FerryGRDB
import Foundation
import GRDB

/// Reading and writing one collection row generically, whatever its fields.
extension SQLiteStorage {
    static func storedRecord(_ row: Row, collection: CollectionDefinition) -> (id: UUID, seq: Int64, record: StoredRecord)? {
        guard let id = UUID(wireText: row["id"]), let space = UUID(wireText: row["_space"]) else { return nil }
        let clocks = ClockCoding.decode(row["_clocks"])
        var fields: [String: JSONValue] = [:]
        for field in collection.fields where clocks[field.name] != nil || !(row[field.name] as DatabaseValue).isNull {
            fields[field.name] = jsonValue(row[field.name] as DatabaseValue, type: collection.storedType(of: field))
        }
        var state = RecordState(fields: fields, clocks: clocks, isDeleted: row["_deleted"])
        state.unseal((row[SQLDialect.sealedColumn] as String?).flatMap(JSONValue.init(jsonText:)), in: collection)
        return (id, row["_seq"], StoredRecord(space: space, state: state))
    }

    static func fetchRecords(
        _ db: Database, _ collection: CollectionDefinition, where condition: String, arguments: StatementArguments
    ) throws -> [(id: UUID, seq: Int64, record: StoredRecord)] {
        try Row.fetchAll(db, sql: "SELECT * FROM \(SQLDialect.sqlite.quote(collection.name)) WHERE \(condition)", arguments: arguments)
            .compactMap { storedRecord($0, collection: collection) }
    }

    /// Upserts the row of `write`, stamped `updatedAt` (``Timestamp`` text, formatted once per push).
    static func writeRecord(_ db: Database, _ write: PushPlan.Write, seq: Int64, updatedAt: String, isSealed: Bool) throws {
        let collection = write.collection
        let (typed, sealed) = write.record.storageValues(in: collection, isSealed: isSealed)
        var values: [DatabaseValue] = [
            write.key.id.databaseText.databaseValue, write.record.space.databaseText.databaseValue, seq.databaseValue,
            ClockCoding.encode(write.record.state.clocks).databaseValue, write.record.state.isDeleted.databaseValue,
            updatedAt.databaseValue, sealed.databaseValue,
        ]
        values.reserveCapacity(values.count + collection.fields.count)
        for field in collection.fields {
            values.append(try databaseValue(typed[field.name] ?? .null, type: collection.storedType(of: field)))
        }
        // One statement per collection, prepared once per connection: a push writes up to 1000 rows, and
        // preparing (with GRDB's authorizer) cost more than running.
        try db.cachedStatement(sql: upsertTexts.text(for: collection, build: upsertText)).execute(arguments: StatementArguments(columns: values))
    }

    private static let upsertTexts = StatementTextCache()

    private static func upsertText(_ collection: CollectionDefinition) -> String {
        let columns = ["id", "_space", "_seq", "_clocks", "_deleted", "_updated_at", SQLDialect.sealedColumn] + collection.fields.map(\.name)
        let quoted = columns.map { SQLDialect.sqlite.quote($0) }
        let updates = quoted.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return """
            INSERT INTO \(SQLDialect.sqlite.quote(collection.name)) (\(quoted.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            ON CONFLICT (id) DO UPDATE SET \(updates)
            """
    }
}
