import FerryCore
@testable import FerryServer
import Foundation
import GRDB
import Testing

/// How the server opens its SQLite database: every connection, reader or writer, configured alike.
@Suite("Storage: SQLite connections")
struct SQLiteConnectionTests {
    @Test("every connection zeroes deleted content only in the pages a delete writes anyway, and syncs at checkpoints")
    func connectionSettings() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-sqlite-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SQLiteStorage(path: folder.appending(path: "ferry.sqlite").path())
        // secure_delete 2 is FAST (Debian's SQLite opens with 1: every freed page zeroed); synchronous 1 is NORMAL.
        let read = try await storage.pool.read { db in
            [try Int.fetchOne(db, sql: "PRAGMA secure_delete"), try Int.fetchOne(db, sql: "PRAGMA synchronous")]
        }
        let written = try await storage.pool.write { db in
            [try Int.fetchOne(db, sql: "PRAGMA secure_delete"), try Int.fetchOne(db, sql: "PRAGMA synchronous")]
        }
        #expect(read == [2, 1] && written == [2, 1])
        try await storage.close()
    }
}
