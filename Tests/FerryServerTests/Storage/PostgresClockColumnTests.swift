import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import PostgresNIO
import Testing

/// PostgreSQL only: the `_clocks` column is text; migration 10 converts tables created while it was jsonb.
@Suite("PostgreSQL clock column")
struct PostgresClockColumnTests {
    static let schema = """
        collections:
          notes:
            fields:
              title: text
              body: text
        """

    /// The migrations before the one this suite tests.
    static let before = Migration.server.filter { $0.version < 10 }

    @Test("migration 10 turns a jsonb _clocks into text, and the rows pull with the clocks they had",
          arguments: TestEngine.available.filter { $0 == .postgres })
    func convertsJSONBClocks(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            guard case .postgres(let url) = database.location else { return }
            let storage = PostgresStorage(url: url, logger: .testing)
            // A database as the ferry before migration 10 left it.
            try await storage.migrate(Self.before)
            let schema = try SchemaParser.parse(Self.schema)
            try await storage.apply(schema)
            #expect(try await database.columns(of: "notes")["_clocks"] == "text", "new tables are made with text")

            // The table as an earlier ferry created it, with a row it wrote.
            let (space, id) = (UUID(), UUID())
            let (older, newer) = ("001700000000000-00001-device-a", "001700000000001-00000-device-b")
            try await database.execute([
                #"ALTER TABLE notes ALTER COLUMN "_clocks" DROP DEFAULT, ALTER COLUMN "_clocks" TYPE jsonb USING "_clocks"::jsonb"#,
                """
                INSERT INTO notes (id, _space, _seq, _clocks, _deleted, _updated_at, title, body)
                VALUES ('\(id.lowercasedText)', '\(space.lowercasedText)', 1, '{"title": "\(older)", "body": "\(newer)"}', false, now(), 'Grace', NULL)
                """,
            ])
            #expect(try await database.columns(of: "notes")["_clocks"] == "jsonb")

            #expect(try await storage.migrate(Migration.server).map(\.name).first == "record clocks stored as text")
            #expect(try await database.columns(of: "notes")["_clocks"] == "text")
            #expect(try await storage.apply(schema).isEmpty, "no schema change is planned")
            // Pulls go through the pool, which serves while it runs.
            let pool = Task { await storage.client.run() }
            defer { pool.cancel() }
            let pages = try await storage.pull([SpaceCursor(space: space, cursor: 0)], limit: 10, bytes: 1 << 20, schema: schema, format: PullFormat(clockForm: .row, layout: .changes))
            let json = try #require(pages[space]?.changes.first?.json)
            let change = try JSONValueDecoder().decode(Change.self, from: Data(json))
            #expect(change.fields == ["title": .string("Grace"), "body": .null])
            #expect(change.clocks == ["title": try #require(HLC(older)), "body": try #require(HLC(newer))])
            try await storage.close()
        }
    }
}
