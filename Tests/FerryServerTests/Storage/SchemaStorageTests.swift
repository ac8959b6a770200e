import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Logging
import Testing

/// Every test runs the same body on SQLite and on PostgreSQL.
@Suite("Schema storage")
struct SchemaStorageTests {
    static let notesV1 = """
        collections:
          sermons:
            fields:
              title: { type: text, required: true }
              recorded_at: timestamp
              audio: blob
          notes:
            parent: { collection: sermons, field: sermon_id }
            fields:
              body: text
              position: real
            unique: [[sermon_id, position]]
        """

    /// Opens the storage, applies the server migrations, runs `body`, closes.
    func withStorage(_ database: TestDatabase, _ body: (any DatabaseStorage) async throws -> Void) async throws {
        let storage: any DatabaseStorage
        switch database.location {
        case .sqlite(let path): storage = try SQLiteStorage(path: path)
        case .postgres(let url): storage = PostgresStorage(url: url, logger: .testing)
        }
        try await storage.migrate(Migration.server)
        try await body(storage)
        try await storage.close()
    }

    @Test("creates real tables with the sync columns and typed fields", arguments: TestEngine.available)
    func createsTables(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                let changes = try await storage.apply(try SchemaParser.parse(Self.notesV1))
                #expect(changes.count == 3)
                let tables = try await database.tableNames()
                #expect(tables.isSuperset(of: ["profiles", "sermons", "notes", "ferry_collections", "ferry_migrations"]))
                let columns = try await database.columns(of: "notes")
                #expect(Set(columns.keys) == ["id", "_space", "_seq", "_clocks", "_deleted", "_updated_at", "_sealed", "sermon_id", "body", "position"])
                let sermons = try await database.columns(of: "sermons")
                switch engine {
                case .sqlite:
                    #expect(sermons["audio"] == "text", "a blob reference is JSON text")
                    #expect(sermons["recorded_at"] == "text")
                case .postgres:
                    #expect(sermons["audio"] == "jsonb", "a blob reference is JSON")
                    #expect(sermons["recorded_at"] == "timestamp with time zone")
                    #expect(columns["sermon_id"] == "uuid")
                }
                #expect(try await storage.storedCollections().map(\.name).sorted() == ["notes", "profiles", "sermons"])
            }
        }
    }

    @Test("applying the same schema again changes nothing", arguments: TestEngine.available)
    func reapplyIsANoOp(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                let schema = try SchemaParser.parse(Self.notesV1)
                try await storage.apply(schema)
                #expect(try await storage.apply(schema).isEmpty)
                #expect(try await storage.migrate(Migration.server).isEmpty)
                #expect(try await storage.appliedMigrationVersions() == Migration.server.map(\.version))
            }
        }
    }

    @Test("a new optional field adds its column; existing rows keep their data", arguments: TestEngine.available)
    func addsFields(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                try await storage.apply(try SchemaParser.parse(Self.notesV1))
                try await database.execute([
                    """
                    INSERT INTO sermons (id, _space, _seq, _updated_at, title)
                    VALUES ('8a6f1a4e-4a4b-4bb0-9a39-2f7a3c1b0c11', '0b6a1c7e-2d8f-4b7e-9a1c-3e5f7a9b1c2d', 1, '2026-11-21T10:00:00Z', 'Grace')
                    """
                ])
                let v2 = Self.notesV1.replacingOccurrences(of: "audio: blob", with: "audio: blob\n      speaker: text")
                let changes = try await storage.apply(try SchemaParser.parse(v2))
                #expect(changes.count == 1)
                #expect(try await database.columns(of: "sermons")["speaker"] != nil)
                try await database.execute(["UPDATE sermons SET speaker = 'Ruth' WHERE title = 'Grace'"])
            }
        }
    }

    @Test("a table created before the _sealed column gains it, keeping its rows", arguments: TestEngine.available)
    func addsSealedColumn(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                let schema = try SchemaParser.parse(Self.notesV1)
                try await storage.apply(schema)
                // A table as an earlier ferry created it: the reserved columns without _sealed.
                try await database.execute([
                    "ALTER TABLE sermons DROP COLUMN _sealed",
                    """
                    INSERT INTO sermons (id, _space, _seq, _updated_at, title)
                    VALUES ('8a6f1a4e-4a4b-4bb0-9a39-2f7a3c1b0c11', '0b6a1c7e-2d8f-4b7e-9a1c-3e5f7a9b1c2d', 1, '2026-11-21T10:00:00Z', 'Grace')
                    """,
                ])
                #expect(try await database.columns(of: "sermons")["_sealed"] == nil)
                #expect(try await storage.apply(schema).isEmpty, "no schema change is planned")
                let type = try await database.columns(of: "sermons")["_sealed"]
                #expect(type == (engine == .sqlite ? "text" : "jsonb"))
                #expect(try await database.integer("SELECT count(*) FROM sermons WHERE title = 'Grace' AND _sealed IS NULL") == 1)
            }
        }
    }

    @Test("a destructive change is refused and changes nothing", arguments: TestEngine.available)
    func refusesDestructiveChanges(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                try await storage.apply(try SchemaParser.parse(Self.notesV1))
                // One additive change and one destructive one: neither may land.
                let v2 = Self.notesV1
                    .replacingOccurrences(of: "      audio: blob\n", with: "")
                    .replacingOccurrences(of: "position: real", with: "position: real\n      author: text")
                let error = await #expect(throws: DestructiveSchemaChangeError.self) {
                    try await storage.apply(try SchemaParser.parse(v2))
                }
                #expect(error?.problems.map(\.description).first?.hasPrefix("sermons.audio:") == true)
                #expect(try await database.columns(of: "notes")["author"] == nil, "the transaction rolled back")
                #expect(try await database.columns(of: "sermons")["audio"] != nil)
                let stored = try await storage.storedCollections()
                #expect(stored.first { $0.name == "sermons" }?.field(named: "audio") != nil)
            }
        }
    }

    @Test("unique keys hold within a space and ignore tombstones", arguments: TestEngine.available)
    func uniqueKeysPerSpace(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                try await storage.apply(try SchemaParser.parse(Self.notesV1))
                let spaceA = "0b6a1c7e-2d8f-4b7e-9a1c-3e5f7a9b1c2d", spaceB = "1c7b2d8f-3e9a-4c8f-8b2d-4f6a8b0c2d3e"
                let sermon = "8a6f1a4e-4a4b-4bb0-9a39-2f7a3c1b0c11"
                func insert(_ id: String, _ space: String, deleted: Bool = false) -> String {
                    let flag = engine == .sqlite ? (deleted ? "1" : "0") : (deleted ? "true" : "false")
                    return """
                        INSERT INTO notes (id, _space, _seq, _updated_at, _deleted, sermon_id, position)
                        VALUES ('\(id)', '\(space)', 1, '2026-11-21T10:00:00Z', \(flag), '\(sermon)', 1.5)
                        """
                }
                try await database.execute([
                    insert("00000000-0000-4000-8000-000000000001", spaceA, deleted: true),
                    insert("00000000-0000-4000-8000-000000000002", spaceA),
                    insert("00000000-0000-4000-8000-000000000003", spaceB),
                ])
                await #expect(throws: (any Error).self) {
                    try await database.execute([insert("00000000-0000-4000-8000-000000000004", spaceA)])
                }
            }
        }
    }

    @Test("a database migrated by a newer server is refused", arguments: TestEngine.available)
    func refusesNewerDatabase(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withStorage(database) { storage in
                try await database.execute(["INSERT INTO ferry_migrations (version, name) VALUES (999, 'future')"])
                let error = await #expect(throws: ServerStartupError.self) { try await storage.migrate(Migration.server) }
                #expect(error?.code == .databaseTooNew)
            }
        }
    }
}
