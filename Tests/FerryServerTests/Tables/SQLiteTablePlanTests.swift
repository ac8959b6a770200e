import FerryCore
@testable import FerryServer
import Foundation
import GRDB
import Testing

/// The plans SQLite picks for table reads. A new database has no statistics, and SQLite then prefers an equality on
/// `_space` to a list of ids: an embedded resource's read walked every record of the space and sorted them, twice
/// the read through the link's index (`ferry-benchmark --rest`). PostgreSQL keeps statistics of its own.
@Suite("Tables: SQLite query plans")
struct SQLiteTablePlanTests {
    static let schema = """
        collections:
          sermons:
            fields:
              title: text
          notes:
            parent: { collection: sermons, field: sermon_id }
            fields:
              sermon_id: uuid
              text: text
        """

    @Test("rows named by a list of ids are found through that list's index; a page of a space through the space's")
    func idListsUseTheirIndex() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-plan-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SQLiteStorage(path: folder.appending(path: "ferry.sqlite").path())
        try await storage.migrate(Migration.server)
        let schema = try SchemaParser.parse(Self.schema)
        _ = try await storage.apply(schema)
        let notes = try #require(schema.collection(named: "notes"))
        let space = UUID()
        let ids = (0..<100).map { _ in UUID().lowercasedText }

        func plan(_ selection: RowSelection) async throws -> String {
            let (sql, arguments, _) = try SQLiteStorage.selectStatement(selection)
            return try await storage.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments))
                    .map { $0["detail"] as String }.joined(separator: "; ")
            }
        }

        // An embedded resource: the children of a page of parents, ordered by their link (TableService.render).
        let children = try await plan(RowSelection(
            collection: notes, spaces: [space], filter: .all([.ids("sermon_id", ids)]), order: [RowOrder(column: "sermon_id")], limit: 20_001
        ))
        #expect(children.contains("USING INDEX notes__parent") && !children.contains("notes__seq"), "\(children)")
        // Records by id (an embedded parent, the rows a write changed): the primary key.
        let byID = try await plan(RowSelection(collection: notes, spaces: [space], filter: .ids("id", ids), limit: ids.count))
        #expect(byID.contains("sqlite_autoindex_notes_1") && !byID.contains("notes__seq"), "\(byID)")
        // A page of the space with no list of ids keeps the space's index.
        let page = try await plan(RowSelection(collection: notes, spaces: [space], filter: .compare("text", .eq, "x"), limit: 1000))
        #expect(page.contains("notes__seq"), "\(page)")
        try await storage.close()
    }
}
