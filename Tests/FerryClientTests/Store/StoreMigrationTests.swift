import FerryClient
import FerryCore
import FerryTesting
import Foundation
import GRDB
import Testing

/// Ferry's own tables in the device store migrate by version (GRDB's `DatabaseMigrator`), so a store an app shipped
/// opens in every later version with its data and its waiting writes.
@Suite("Store: versioned migrations")
struct StoreMigrationTests {
    /// A store made before migrations were versioned: two records and two waiting writes (see `writeFixture`).
    static let fixture = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/store-unversioned.sqlite")
    static let sermon = UUID(uuidString: "8E1B7C52-7A0E-4C55-9B8B-3F1A3E0D2A11")!
    static let note = UUID(uuidString: "0C6F2B11-58D4-4F0C-8C1E-6A2D7B9E4F22")!
    static let device = UUID(uuidString: "5A4B3C2D-1E0F-4A9B-8C7D-6E5F4A3B2C1D")!

    @Test("a store from before versioned migrations opens, migrates, and keeps its rows, outbox and device id")
    func unversionedFixtureMigrates() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "store.sqlite")
        try FileManager.default.copyItem(at: Self.fixture, to: file)

        let store = try LocalStore(fileURL: file, schema: StoreFixture.schema, defaultSpace: Self.device)
        #expect(store.deviceId == Self.device, "the store keeps its device id")
        #expect(try store.fetch(collection: "sermons", id: Self.sermon)?.fields["title"] == .string("Before migrations"))
        #expect(try store.fetch(collection: "notes", id: Self.note)?.fields["text"] == .string("Waiting to sync"))
        let pending = try store.pendingMutations()
        #expect(pending.map(\.mutationId) == [1, 2] && pending.map(\.id) == [Self.sermon, Self.note])

        let applied = try store.writer.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(applied == ["v1 ferry tables", "v2 outbox by space", "v3 blobs", "v4 outbox without the space index"])
        let index = try store.writer.read { db in
            try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'ferry_outbox__space'")
        }
        #expect(index == nil, "v2 made the index on the old store and v4 dropped it")
        _ = try store.save(collection: "sermons", fields: ["title": "After", "date": "2026-11-01T10:00:00Z"])
        #expect(try store.pendingMutations().map(\.mutationId) == [1, 2, 3], "ids continue")

        // Opened again, nothing runs twice.
        let again = try LocalStore(fileURL: file, schema: StoreFixture.schema)
        #expect(try again.pendingCount() == 3)
    }

    @Test("renumbering the outbox keeps the order and continues after the server's last id")
    func renumberOutbox() throws {
        let fixture = try StoreFixture(kind: .file)
        let store = fixture.store
        for title in ["A", "B", "C"] {
            _ = try store.save(collection: "sermons", fields: ["title": .string(title), "date": "2026-11-01T10:00:00Z"])
        }
        let before = try store.pendingMutations()
        #expect(try store.renumberOutbox(after: 41) == 3)
        let after = try store.pendingMutations()
        #expect(after.map(\.mutationId) == [42, 43, 44])
        #expect(after.map(\.id) == before.map(\.id) && after.map(\.fields) == before.map(\.fields) && after.map(\.clocks) == before.map(\.clocks))
        _ = try store.save(collection: "sermons", fields: ["title": "D", "date": "2026-11-01T10:00:00Z"])
        #expect(try store.pendingMutations().last?.mutationId == 45)
        #expect(try store.renumberOutbox(after: 10) == 0, "ids already above the server's last stay")
    }

    /// Writes the fixture: `FERRY_WRITE_STORE_FIXTURE=1 swift test --filter writeFixture`. The store is made by
    /// migration v1, whose statements are those of the unversioned store, and then loses what versioning added
    /// (`grdb_migrations` and later migrations' objects), so it is byte for byte the schema apps shipped before.
    @Test("write the unversioned fixture", .enabled(if: ProcessInfo.processInfo.environment["FERRY_WRITE_STORE_FIXTURE"] == "1"))
    func writeFixture() throws {
        try? FileManager.default.removeItem(at: Self.fixture)
        let clock = TestClock(StoreFixture.start)
        let store = try LocalStore(
            fileURL: Self.fixture, schema: StoreFixture.schema, defaultSpace: Self.device, deviceId: Self.device, now: { clock.now }
        )
        _ = try store.save(collection: "sermons", id: Self.sermon, fields: ["title": "Before migrations", "date": "2026-11-01T10:00:00Z"])
        _ = try store.save(collection: "notes", id: Self.note, fields: ["sermon_id": .string(Self.sermon.uuidString.lowercased()), "text": "Waiting to sync"])
        try store.writer.write { db in
            try db.execute(sql: "DROP TABLE grdb_migrations")
            try db.execute(sql: "DROP INDEX IF EXISTS ferry_outbox__space")
        }
        _ = try (store.writer as? DatabasePool)?.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    @Test("every connection of an on-disk store zeroes deleted content only in the pages a delete writes anyway")
    func fastSecureDelete() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try LocalStore(fileURL: folder.url.appending(path: "store.sqlite"), schema: StoreFixture.schema)
        // 2 is FAST; Debian's SQLite opens with 1 (every freed page zeroed), others with 0.
        #expect(try store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA secure_delete") } == 2)
        #expect(try store.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA secure_delete") } == 2)
    }
}

