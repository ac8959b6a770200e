import FerryCore
import FerrySecurity
@testable import FerryServer
import FerryTesting
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// PostgreSQL's blob store hashes parts as it stores them; an upload whose bytes did not all pass through one instance
/// is hashed from its stored parts instead. Two stores on one database play two instances.
@Suite("Blobs: uploads hashed as they arrive, on PostgreSQL")
struct PostgresUploadHashTests {
    static let part = PostgresBlobStore.partSize

    static func bytes(_ seed: UInt8, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        var hasher = ContentHasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }

    static func body(_ bytes: ArraySlice<UInt8>) -> AsyncStream<ByteBuffer> { UploadBody.pieces(bytes) }

    /// Runs `body` with two stores on one fresh database and the id of a space in it.
    static func withStores(_ body: (PostgresBlobStore, PostgresBlobStore, UUID) async throws -> Void) async throws {
        try await TestDatabase.with(.postgres) { database in
            guard case .postgres(let url) = database.location else { return }
            let storage = PostgresStorage(url: url, logger: .testing)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await storage.client.run() }
                defer { group.cancelAll() }
                try await storage.migrate(Migration.server)
                let space = UUID()
                try await database.execute(["INSERT INTO ferry_spaces (id, created_at) VALUES ('\(space.lowercasedText)', now())"])
                let first = PostgresBlobStore(client: storage.client, logger: .testing)
                try await body(first, PostgresBlobStore(client: storage.client, logger: .testing), space)
            }
        }
    }

    @Test("bytes written by two instances, or an upload begun again under the same id, hash to what is stored",
          arguments: TestEngine.available.filter { $0 == .postgres })
    func mixedInstances(_ engine: TestEngine) async throws {
        try await Self.withStores { first, second, space in
            let length = 2 * Self.part + 1000

            // One instance receives everything: its running hash names the bytes.
            let whole = Self.bytes(1, length)
            let one = UploadID(space: space, sha256: Self.sha256(whole))
            _ = try await first.append(one, length: Int64(length), at: 0, body: Self.body(whole[...]))
            #expect(try await first.complete(one, space: space, expected: Self.sha256(whole)).sha256 == Self.sha256(whole))

            // The first part through one instance, the rest through the other, completed by the first.
            let mixed = Self.bytes(2, length)
            let two = UploadID(space: space, sha256: Self.sha256(mixed))
            _ = try await first.append(two, length: Int64(length), at: 0, body: Self.body(mixed[..<Self.part]))
            _ = try await second.append(two, length: Int64(length), at: Int64(Self.part), body: Self.body(mixed[Self.part...]))
            #expect(try await first.complete(two, space: space, expected: nil).sha256 == Self.sha256(mixed))

            // The first instance holds the hash of a first part of X; the upload is dropped and begun again under the same
            // id with other bytes by the second instance; the first instance then receives X's rest. The stored bytes
            // are Y's first part and X's rest, and the hash must say so (not X's, which the id claims).
            let claimed = Self.bytes(3, length), other = Self.bytes(4, length)
            let three = UploadID(space: space, sha256: Self.sha256(claimed))
            _ = try await first.append(three, length: Int64(length), at: 0, body: Self.body(claimed[..<Self.part]))
            try await second.discard(three)
            _ = try await second.append(three, length: Int64(length), at: 0, body: Self.body(other[..<Self.part]))
            _ = try await first.append(three, length: Int64(length), at: Int64(Self.part), body: Self.body(claimed[Self.part...]))
            let stored = Array(other[..<Self.part] + claimed[Self.part...])
            #expect(try await first.complete(three, space: space, expected: nil).sha256 == Self.sha256(stored))
        }
    }
}
