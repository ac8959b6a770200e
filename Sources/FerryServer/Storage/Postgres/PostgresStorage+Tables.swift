import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: TableStorage {
    func select(_ selection: RowSelection) async throws -> SelectedRows {
        var parameters = PostgresParameters()
        let condition = try RowSelectionSQL.condition(selection, &parameters)
        let order = try RowSelectionSQL.orderBy(selection, dialect: .postgres)
        let collection = selection.collection
        var binds = parameters.bindings
        let limit = Self.bind(.integer(Int64(selection.limit)), type: .integer, into: &binds)
        let offset = Self.bind(.integer(Int64(selection.offset)), type: .integer, into: &binds)
        let table = SQLDialect.postgres.quote(collection.name)
        let sql = "SELECT \(Self.tableColumns(collection)) FROM \(table) WHERE \(condition) \(order) LIMIT \(limit) OFFSET \(offset)"
        var found = SelectedRows(records: TableRecords(fieldCount: collection.fields.count))
        for try await row in try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            try Self.appendTableRecord(row, collection: collection, to: &found.records)
        }
        if selection.countsAll {
            let count = "SELECT count(*) FROM \(table) WHERE \(condition)"
            let rows = try await client.query(PostgresQuery(unsafeSQL: count, binds: parameters.bindings), logger: logger)
            for try await total in rows.decode(Int64.self) { found.total = Int(total) }
        }
        return found
    }

    func spaces(ids: [UUID]) async throws -> [SpaceSummary] {
        let rows = try await client.query(
            "SELECT id, name, is_personal, is_encrypted, seq, key_version FROM ferry_spaces WHERE id = ANY(\(ids))", logger: logger
        )
        var spaces: [SpaceSummary] = []
        for try await (id, name, isPersonal, isEncrypted, seq, keyVersion) in rows.decode((UUID, String, Bool, Bool, Int64, Int32).self) {
            spaces.append(SpaceSummary(
                id: id, name: name, isPersonal: isPersonal, isEncrypted: isEncrypted, role: .owner, seq: seq, keyVersion: Int(keyVersion)
            ))
        }
        return spaces
    }
}

/// A statement's values for PostgreSQL: `$1`, `$2`… in order, cast where the type needs it.
private struct PostgresParameters: SQLParameters {
    let dialect = SQLDialect.postgres
    var bindings = PostgresBindings()

    mutating func bind(_ value: SQLValue, type: FieldType) -> String {
        PostgresStorage.bind(value, type: type, into: &bindings)
    }
}
