import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// PostgreSQL only: how a pull page is read right after a large import, before the table's statistics catch up.
@Suite("PostgreSQL pull plan")
struct PostgresPullPlanTests {
    static let schema = """
        collections:
          notes:
            fields:
              title: text
        """

    @Test("a page reads the (_space, _seq) index in order and stops, even with stale statistics",
          arguments: TestEngine.available.filter { $0 == .postgres })
    func orderedPageScan(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            guard case .postgres(let url) = database.location else { return }
            let storage = PostgresStorage(url: url, logger: .testing)
            try await storage.migrate(Migration.server)
            let notes = try SchemaParser.parse(Self.schema).collections.first { $0.name == "notes" }!
            _ = try await storage.apply(try SchemaParser.parse(Self.schema))
            try await storage.close()
            let space = UUID().lowercasedText
            // 60,000 rows of one space, never analyzed: what a push of a large store leaves for the next minute.
            try await database.execute([
                "ALTER TABLE notes SET (autovacuum_enabled = false)",
                """
                INSERT INTO notes (id, _space, _seq, _clocks, _deleted, _updated_at, title)
                SELECT gen_random_uuid(), '\(space)', n, '{}', false, now(), 'note ' || n FROM generate_series(1, 60000) AS n
                """,
            ])
            let page = PostgresStorage.selectRecords(notes, where: PostgresStorage.pageCondition(bounded: false))
                .replacingOccurrences(of: "$1", with: "'\(space)'").replacingOccurrences(of: "$2", with: "30000")
                .replacingOccurrences(of: "$3", with: "1001")
            let unguarded = try await database.strings("EXPLAIN " + page).joined(separator: "\n")
            #expect(unguarded.contains("Bitmap Heap Scan"), "the trap: every row after the cursor read, then sorted\n\(unguarded)")
            let plan = try await database.strings("EXPLAIN " + page, after: [PostgresStorage.orderedScansOnly]).joined(separator: "\n")
            #expect(plan.contains("Index Scan using notes__seq"), "\(plan)")
            #expect(!plan.contains("Sort") && !plan.contains("Bitmap"), "\(plan)")
        }
    }
}
