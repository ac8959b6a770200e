import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// PostgreSQL's blob store keeps one part on its way to the database while the next arrives: what a body delivered
/// before it broke off or overran is kept whole and in order.
@Suite("Blobs: parts stored while the next arrives, on PostgreSQL")
struct PostgresBlobAppendTests {
    static let part = PostgresBlobStore.partSize

    @Test("a body that breaks off after several parts keeps every byte it delivered; the upload resumes from there and hashes right",
          arguments: TestEngine.available.filter { $0 == .postgres })
    func brokenBody(_ engine: TestEngine) async throws {
        try await PostgresUploadHashTests.withStores { store, _, space in
            let bytes = PostgresUploadHashTests.bytes(5, 5 * Self.part + 123)
            let hash = PostgresUploadHashTests.sha256(bytes)
            let id = UploadID(space: space, sha256: hash)
            let delivered = 3 * Self.part + Self.part / 2
            let broken = UploadBody.brokenOff(bytes, after: delivered)
            await #expect(throws: CancellationError.self) { try await store.append(id, length: Int64(bytes.count), at: 0, body: broken) }
            #expect(try await store.upload(id) == UploadProgress(length: Int64(bytes.count), received: Int64(delivered)))

            let rest = try await store.append(id, length: Int64(bytes.count), at: Int64(delivered), body: PostgresUploadHashTests.body(bytes[delivered...]))
            #expect(rest == Int64(bytes.count))
            #expect(try await store.complete(id, space: space, expected: hash) == BlobKey(space: space, sha256: hash))
        }
    }

    @Test("a body longer than its upload stores the declared bytes and is refused beyond them",
          arguments: TestEngine.available.filter { $0 == .postgres })
    func overrun(_ engine: TestEngine) async throws {
        try await PostgresUploadHashTests.withStores { store, _, space in
            let length = 2 * Self.part + 10
            let bytes = PostgresUploadHashTests.bytes(6, length + Self.part)
            let declared = Array(bytes[..<length])
            let id = UploadID(space: space, sha256: PostgresUploadHashTests.sha256(declared))
            await #expect(throws: BlobStoreError.beyondLength) {
                try await store.append(id, length: Int64(length), at: 0, body: PostgresUploadHashTests.body(bytes[...]))
            }
            #expect(try await store.upload(id) == UploadProgress(length: Int64(length), received: Int64(length)))
            let key = try await store.complete(id, space: space, expected: nil)
            #expect(key.sha256 == PostgresUploadHashTests.sha256(declared))
        }
    }

    @Test("a part whose preparation failed (a lock held past lock_timeout) is stored later on that connection, by the same statement as a query",
          arguments: TestEngine.available.filter { $0 == .postgres })
    func failedPreparation(_ engine: TestEngine) async throws {
        try await TestDatabase.with(.postgres) { database in
            guard case .postgres(let url) = database.location else { return }
            let storage = PostgresStorage(url: url, logger: .testing)
            // One connection, so the upload after the failure meets the connection that remembers it.
            var configuration = PostgresStorage.clientConfiguration(url)
            configuration.options.maximumConnections = 1
            let single = PostgresClient(configuration: configuration, backgroundLogger: .testing)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await storage.client.run() }
                defer { group.cancelAll() }
                try await storage.migrate(Migration.server)
                let space = UUID()
                try await database.execute([
                    "INSERT INTO ferry_spaces (id, created_at) VALUES ('\(space.lowercasedText)', now())",
                    "ALTER DATABASE \"\(url.database)\" SET lock_timeout = '300ms'",  // the single client's sessions
                ])
                group.addTask { await single.run() }
                let store = PostgresBlobStore(client: single, logger: .testing)
                let bytes = PostgresUploadHashTests.bytes(7, 2 * Self.part)
                let hash = PostgresUploadHashTests.sha256(bytes)
                let id = UploadID(space: space, sha256: hash)

                let (released, release) = AsyncStream.makeStream(of: Void.self)
                let (locked, isLocked) = AsyncStream.makeStream(of: Void.self)
                let holder = Task {
                    try await storage.client.withTransaction(logger: .testing) { connection in
                        try await connection.query("LOCK TABLE ferry_blob_parts IN ACCESS EXCLUSIVE MODE", logger: .testing)
                        isLocked.yield()
                        for await _ in released { break }
                    }
                }
                for await _ in locked { break }
                await #expect(throws: (any Error).self) {
                    try await store.append(id, length: Int64(bytes.count), at: 0, body: PostgresUploadHashTests.body(bytes[...]))
                }
                release.yield()
                try await holder.value

                #expect(try await store.append(id, length: Int64(bytes.count), at: 0, body: PostgresUploadHashTests.body(bytes[...])) == Int64(bytes.count))
                #expect(try await store.complete(id, space: space, expected: hash) == BlobKey(space: space, sha256: hash))
            }
        }
    }
}
