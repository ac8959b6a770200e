import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// Migration 11 moves each device's fingerprints from its progress row to a row of `ferry_device_batches`, so a push
/// replayed across the upgrade still answers `duplicate`.
@Suite("Fingerprint rows migration")
struct FingerprintMigrationTests {
    @Test("a progress row's fingerprints become a batch row with the same bytes; the old column is emptied", arguments: TestEngine.available)
    func movesFingerprints(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let storage: any DatabaseStorage
            switch database.location {
            case .sqlite(let path): storage = try SQLiteStorage(path: path)
            case .postgres(let url): storage = PostgresStorage(url: url, logger: .testing)
            }
            try await storage.migrate(Migration.server.filter { $0.version < 11 })
            let (user, device) = (UUID().lowercasedText, UUID().lowercasedText)
            var held = ProcessedBatch()
            held.append(6, MutationFingerprint(bytes: Array(repeating: 0xAB, count: MutationFingerprint.length)))
            held.append(7, MutationFingerprint(bytes: Array(repeating: 0xCD, count: MutationFingerprint.length)))
            let hex = held.blob.map { String(format: "%02x", $0) }.joined()
            let blob = engine == .sqlite ? "X'\(hex)'" : "'\\x\(hex)'::bytea"
            let now = engine == .sqlite ? "'2026-11-25T00:00:00.000Z'" : "now()"
            try await database.execute([
                "INSERT INTO ferry_users (id, email, password_hash, created_at, updated_at) VALUES ('\(user)', 'a@example.com', 'x', \(now), \(now))",
                "INSERT INTO ferry_device_mutations (user_id, device_id, last_mutation_id, last_batch, updated_at) VALUES ('\(user)', '\(device)', 7, \(blob), \(now))",
            ])

            #expect(try await storage.migrate(Migration.server).map(\.version) == Array(11...Migration.server.map(\.version).max()!))
            let moved = engine == .sqlite ? "last_mutation_id || ':' || lower(hex(fingerprints))" : "last_mutation_id::text || ':' || encode(fingerprints, 'hex')"
            #expect(try await database.strings("SELECT \(moved) FROM ferry_device_batches WHERE device_id = '\(device)'") == ["7:\(hex)"])
            #expect(try await database.integer("SELECT COUNT(*) FROM ferry_device_mutations WHERE last_batch IS NOT NULL") == 0)
            try await storage.close()
        }
    }
}
