import FerryCore
import FerryGRDB
import Foundation
import GRDB

extension SQLiteStorage: TableStorage {
    func select(_ selection: RowSelection) async throws -> SelectedRows {
        var parameters = SQLiteParameters()
        let condition = try RowSelectionSQL.condition(selection, &parameters)
        let order = try RowSelectionSQL.orderBy(selection, dialect: .sqlite)
        let (collection, values) = (selection.collection, parameters.values)
        let table = SQLDialect.sqlite.quote(collection.name)
        // Not cached: each request's filters make a statement of their own, which a cache would only fill up with.
        return try await pool.read { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT \(Self.tableColumns(collection)) FROM \(table) WHERE \(condition) \(order) LIMIT ? OFFSET ?",
                arguments: StatementArguments(values + [selection.limit.databaseValue, selection.offset.databaseValue])
            )
            var found = SelectedRows(records: [])
            while let row = try rows.next() {
                if let record = Self.tableRecord(row, collection: collection) { found.records.append(record) }
            }
            if selection.countsAll {
                found.total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE \(condition)", arguments: StatementArguments(values))
            }
            return found
        }
    }

    func spaces(ids: [UUID]) async throws -> [SpaceSummary] {
        let list = "[" + ids.map { "\"\($0.databaseText)\"" }.joined(separator: ",") + "]"
        return try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, name, is_personal, is_encrypted, seq, key_version FROM ferry_spaces WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [list]
            ).compactMap { row in
                guard let id = UUID(uuidString: row["id"]) else { return nil }
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
