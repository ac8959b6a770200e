import FerryCore
import FerryGRDB
import Foundation
import GRDB

extension SQLiteStorage: TableStorage {
    func select(_ selection: RowSelection) async throws -> SelectedRows {
        let (sql, arguments, condition) = try Self.selectStatement(selection)
        let collection = selection.collection
        let types = collection.fields.map(collection.storedType(of:))
        // Not cached: each request's filters make a statement of their own, which a cache would only fill up with.
        return try await pool.read { db in
            var found = SelectedRows(records: TableRecords(fieldCount: collection.fields.count))
            try db.makeStatement(sql: sql).forEachRawRow(arguments: StatementArguments(arguments)) { row in
                Self.appendTableRecord(row, collection: collection, types: types, to: &found.records)
            }
            if selection.countsAll {
                found.total = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM \(SQLDialect.sqlite.quote(collection.name)) WHERE \(condition)",
                    arguments: StatementArguments(arguments.dropLast(2))
                )
            }
            return found
        }
    }

    /// The statement of a selection's page and its values (its filter's, then the limit and the offset), and its
    /// `WHERE` condition alone, for a count.
    static func selectStatement(_ selection: RowSelection) throws(TableError) -> (sql: String, arguments: [DatabaseValue], condition: String) {
        var parameters = SQLiteParameters()
        let condition = try RowSelectionSQL.condition(selection, &parameters)
        let order = try RowSelectionSQL.orderBy(selection, dialect: .sqlite)
        let table = SQLDialect.sqlite.quote(selection.collection.name)
        let sql = "SELECT \(tableColumns(selection.collection)) FROM \(table) WHERE \(condition) \(order) LIMIT ? OFFSET ?"
        return (sql, parameters.values + [selection.limit.databaseValue, selection.offset.databaseValue], condition)
    }

    func spaces(ids: [UUID]) async throws -> [SpaceSummary] {
        let list = "[" + ids.map { "\"\($0.databaseText)\"" }.joined(separator: ",") + "]"
        return try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, name, is_personal, is_encrypted, seq, key_version FROM ferry_spaces WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [list]
            ).compactMap { row in
                guard let id = UUID(wireText: row["id"]) else { return nil }
                return SpaceSummary(
                    id: id, name: row["name"], isPersonal: row["is_personal"], isEncrypted: row["is_encrypted"], role: .owner,
                    seq: row["seq"], keyVersion: row["key_version"]
                )
            }
        }
    }
}

/// A statement's values for SQLite: each a `?` in order.
private struct SQLiteParameters: SQLParameters {
    let dialect = SQLDialect.sqlite
    var values: [DatabaseValue] = []

    mutating func bind(_ value: SQLValue, type: FieldType) -> String {
        values.append(value.databaseValue)
        return "?"
    }
}
