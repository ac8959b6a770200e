import FerryCore
import FerrySecurity
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Blobs in PostgreSQL, so every instance of a scaled-out server reads what any of them received.
///
/// Bytes are kept in parts of ``partSize`` in `ferry_blob_parts`, under a content id: an upload's while it runs, which
/// its blob takes over when it completes, so every byte is written once. Each part of an upload is written with the
/// upload's new offset in one statement, guarded by the old one, so a body that breaks off keeps every whole part and
/// two instances writing one upload cannot interleave; one part is stored while the next arrives. Parts are hashed as
/// they are stored (``RunningUploadHashes``), so completing an upload reads its parts back only when another instance
/// wrote some of them. Reading fetches one part per step.
struct PostgresBlobStore: BlobStore {
    let client: PostgresClient
    let logger: Logger
    let hashes = RunningUploadHashes()
    /// The size of a stored part.
    static let partSize = 1 << 20

    func size(of key: BlobKey) async throws -> Int64? {
        let rows = try await client.query(
            "SELECT size FROM ferry_blobs WHERE space_id = \(key.space) AND sha256 = \(key.sha256)", logger: logger
        )
        for try await size in rows.decode(Int64.self) { return size }
        return nil
    }

    func upload(_ id: UploadID) async throws -> UploadProgress? {
        let rows = try await client.query("SELECT length, received FROM ferry_blob_uploads WHERE id = \(id.text)", logger: logger)
        for try await (length, received) in rows.decode((Int64, Int64).self) {
            return UploadProgress(length: length, received: received)
        }
        return nil
    }

    func openUploads(in space: UUID) async throws -> Int {
        let prefix = space.lowercasedText + "-"
        let rows = try await client.query("SELECT count(*) FROM ferry_blob_uploads WHERE left(id, 37) = \(prefix)", logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    func append<Body: AsyncSequence & Sendable>(_ id: UploadID, length: Int64, at offset: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        try await client.query(
            """
            INSERT INTO ferry_blob_uploads (id, content_id, length, received, updated_at) VALUES (\(id.text), \(UUID()), \(length), 0, now())
            ON CONFLICT (id) DO NOTHING
            """,
            logger: logger
        )
        guard let progress = try await upload(id) else { throw BlobStoreError.uploadNotFound }
        guard progress.length == length else { throw BlobStoreError.lengthMismatch(declared: progress.length) }
        guard progress.received == offset else { throw BlobStoreError.offsetMismatch(current: progress.received) }
        var received = offset, accepted = offset
        var part = ByteBufferAllocator().buffer(capacity: Self.partSize)
        // The hash of the bytes before `offset`, when this instance holds it (or there are none); `content` is learned
        // from the first part stored.
        var running: (content: UUID?, hasher: ContentHasher)? = offset == 0 ? (nil, ContentHasher()) : hashes.take(id).flatMap {
            $0.offset == offset ? ($0.content, $0.hasher) : nil
        }
        // One part is stored (and hashed) while the next arrives, which waited for every part's round trip before. The
        // next is stored only after it, at the offset it reached; after a part that failed, none is.
        var storing: Task<StoredPart, any Error>?
        var storeFailed = false
        func settle() async throws {
            guard let task = storing else { return }
            storing = nil
            let stored: StoredPart
            do {
                stored = try await task.value
            } catch {
                storeFailed = true
                throw error
            }
            received = stored.end
            if let hash = running, hash.content == nil || hash.content == stored.content, let hasher = stored.hasher {
                running = (stored.content, hasher)
                hashes.put(id, RunningUploadHashes.Entry(content: stored.content, offset: received, hasher: hasher))
            } else {
                running = nil
            }
        }
        func flush() async throws {
            try await settle()
            guard part.readableBytes > 0, !storeFailed else { return }
            let (full, at, hasher) = (part, received, running?.hasher)
            part = ByteBufferAllocator().buffer(capacity: Self.partSize)
            storing = Task { try await self.store(full, of: id, at: at, hashing: hasher) }
        }
        do {
            for try await buffer in body {
                var buffer = buffer
                while buffer.readableBytes > 0 {
                    let room = Int(length - accepted)
                    if room == 0 {
                        try await flush()
                        try await settle()
                        throw BlobStoreError.beyondLength
                    }
                    var slice = buffer.readSlice(length: min(Self.partSize - part.readableBytes, buffer.readableBytes, room))!
                    accepted += Int64(slice.readableBytes)
                    part.writeBuffer(&slice)
                    if part.readableBytes == Self.partSize { try await flush() }
                }
            }
            try await flush()
            try await settle()
        } catch {
            // The body broke off (or is refused): keep what arrived whole, so the upload resumes after it.
            if !(error is BlobStoreError) { try? await flush() }
            try? await settle()
            throw error
        }
        return received
    }

    /// A part stored: the upload's new offset, the content it belongs to, and the running hash continued over it (`nil`
    /// when there was none to continue).
    private struct StoredPart: Sendable {
        var end: Int64
        var content: UUID
        var hasher: ContentHasher?
    }

    /// Stores `part` at `offset` while `hasher` is continued over it.
    private func store(_ part: ByteBuffer, of id: UploadID, at offset: Int64, hashing hasher: ContentHasher?) async throws -> StoredPart {
        async let hashed: ContentHasher? = hasher.map { hasher in
            var running = hasher
            part.withUnsafeReadableBytes { running.update($0) }
            return running
        }
        let (end, content) = try await store(part, of: id, at: offset)
        return StoredPart(end: end, content: content, hasher: await hashed)
    }

    /// Writes one part and moves the upload's offset past it, only if no other writer moved it meanwhile; returns the
    /// new offset and the content the part belongs to.
    private func store(_ part: ByteBuffer, of id: UploadID, at offset: Int64) async throws -> (Int64, UUID) {
        let end = offset + Int64(part.readableBytes)
        // One statement, so one round trip and atomic without a transaction: the part is inserted only when the
        // upload's offset moved from `offset` to `end` in it.
        let statement = StoreBlobPart(end: end, upload: id.text, offset: offset, data: part)
        var stored: UUID?
        do {
            // Read to the end, so an error as the statement finishes surfaces before the part counts as stored.
            for try await content in try await client.execute(statement, logger: logger) { stored = content }
        } catch {
            // PostgresNIO keeps a failed preparation for the life of its connection; the same statement as a query
            // goes on. Had the first try been applied, the offset guard finds the offset moved and stores nothing.
            let rows = try await client.query(PostgresQuery(unsafeSQL: StoreBlobPart.sql, binds: try statement.makeBindings()), logger: logger)
            for try await content in rows.decode(UUID.self) { stored = content }
        }
        guard let stored else { throw BlobStoreError.busy }
        return (end, stored)
    }

    func seal(_ id: UploadID) async throws -> Int64 {
        let rows = try await client.query("UPDATE ferry_blob_uploads SET length = received WHERE id = \(id.text) RETURNING length", logger: logger)
        for try await length in rows.decode(Int64.self) { return length }
        throw BlobStoreError.uploadNotFound
    }

    func complete(_ id: UploadID, space: UUID, expected: String?) async throws -> BlobKey {
        let logger = self.logger
        let running = hashes.take(id)
        // One transaction holding the upload's row: an append waits for it, then finds the upload gone (busy).
        let outcome: Result<BlobKey, BlobStoreError> = try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "SELECT length, received, content_id FROM ferry_blob_uploads WHERE id = \(id.text) FOR UPDATE", logger: logger
            )
            var progress: UploadProgress?
            var content = UUID()
            for try await (length, received, contentID) in rows.decode((Int64, Int64, UUID).self) {
                progress = UploadProgress(length: length, received: received)
                content = contentID
            }
            guard let progress, progress.isComplete else { return .failure(.uploadNotFound) }
            var hasher = ContentHasher()
            var position: Int64 = 0
            if let running, running.content == content, running.offset == progress.length {
                (hasher, position) = (running.hasher, progress.length)
            }
            while position < progress.length {
                let part = try await connection.query(
                    "SELECT data FROM ferry_blob_parts WHERE content_id = \(content) AND part_offset = \(position)", logger: logger
                )
                var found = false
                for try await data in part.decode(ByteBuffer.self) {
                    data.withUnsafeReadableBytes { hasher.update($0) }
                    position += Int64(data.readableBytes)
                    found = true
                }
                guard found else { return .failure(.uploadNotFound) }
            }
            let hash = hasher.finalize()
            if let expected, expected != hash {
                try await Self.dropUpload(id, content, connection, logger)
                return .failure(.hashMismatch)
            }
            // The blob takes the upload's parts over; when the space holds it already, they are dropped instead.
            let inserted = try await connection.query(
                """
                INSERT INTO ferry_blobs (space_id, sha256, size, content_id, created_at) VALUES (\(space), \(hash), \(progress.length), \(content), now())
                ON CONFLICT (space_id, sha256) DO UPDATE SET created_at = now() RETURNING content_id
                """,
                logger: logger
            )
            var kept = content
            for try await contentID in inserted.decode(UUID.self) { kept = contentID }
            if kept == content {
                try await connection.query("DELETE FROM ferry_blob_uploads WHERE id = \(id.text)", logger: logger)
            } else {
                try await Self.dropUpload(id, content, connection, logger)
            }
            return .success(BlobKey(space: space, sha256: hash))
        }
        return try outcome.get()
    }

    func discard(_ id: UploadID) async throws {
        _ = hashes.take(id)
        try await client.query(
            """
            WITH gone AS (DELETE FROM ferry_blob_uploads WHERE id = \(id.text) RETURNING content_id)
            DELETE FROM ferry_blob_parts WHERE content_id IN (SELECT content_id FROM gone)
            """,
            logger: logger
        )
    }

    /// Deletes an upload and its parts within a transaction.
    private static func dropUpload(_ id: UploadID, _ content: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM ferry_blob_uploads WHERE id = \(id.text)", logger: logger)
        try await connection.query("DELETE FROM ferry_blob_parts WHERE content_id = \(content)", logger: logger)
    }

    func read(_ key: BlobKey, from offset: Int64) async throws -> any AsyncSequence<ByteBuffer, any Error> & Sendable {
        PartChunks(store: self, key: key, offset: offset)
    }

    /// The bytes of a download's step: a quarter of a part, so a client that reads slowly holds little memory.
    static let readSize = partSize / 4

    /// Up to ``readSize`` bytes of a blob from byte `position` (within the part that holds it), or `nil` past the end.
    fileprivate func part(_ key: BlobKey, at position: Int64) async throws -> ByteBuffer? {
        let rows = try await client.query(
            """
            SELECT substring(p.data FROM (\(position) - p.part_offset + 1)::int FOR \(Int32(Self.readSize)))
            FROM ferry_blobs b JOIN ferry_blob_parts p ON p.content_id = b.content_id
            WHERE b.space_id = \(key.space) AND b.sha256 = \(key.sha256) AND p.part_offset <= \(position)
            ORDER BY p.part_offset DESC LIMIT 1
            """,
            logger: logger
        )
        for try await data in rows.decode(ByteBuffer.self) {
            return data.readableBytes > 0 ? data : nil
        }
        return nil
    }

    func touch(_ key: BlobKey) async throws {
        try await client.query("UPDATE ferry_blobs SET created_at = now() WHERE space_id = \(key.space) AND sha256 = \(key.sha256)", logger: logger)
    }

    func delete(_ key: BlobKey) async throws {
        try await client.query(
            """
            WITH gone AS (DELETE FROM ferry_blobs WHERE space_id = \(key.space) AND sha256 = \(key.sha256) RETURNING content_id)
            DELETE FROM ferry_blob_parts WHERE content_id IN (SELECT content_id FROM gone)
            """,
            logger: logger
        )
    }

    func deleteAll(in spaces: Set<UUID>) async throws {
        guard !spaces.isEmpty else { return }
        try await client.query(
            """
            WITH gone AS (DELETE FROM ferry_blobs WHERE space_id = ANY(\(Array(spaces))) RETURNING content_id)
            DELETE FROM ferry_blob_parts WHERE content_id IN (SELECT content_id FROM gone)
            """,
            logger: logger
        )
    }

    func blobs(storedBefore cutoff: Date) async throws -> [BlobKey] {
        var keys: [BlobKey] = []
        let rows = try await client.query("SELECT space_id, sha256 FROM ferry_blobs WHERE created_at < \(cutoff)", logger: logger)
        for try await (space, hash) in rows.decode((UUID, String).self) { keys.append(BlobKey(space: space, sha256: hash)) }
        return keys
    }

    func totals() async throws -> (count: Int, bytes: Int64) {
        let rows = try await client.query("SELECT count(*), coalesce(sum(size), 0)::bigint FROM ferry_blobs", logger: logger)
        for try await (count, bytes) in rows.decode((Int64, Int64).self) { return (Int(count), bytes) }
        return (0, 0)
    }

    func discardUploads(writtenBefore cutoff: Date) async throws -> Int {
        let rows = try await client.query(
            """
            WITH gone AS (DELETE FROM ferry_blob_uploads WHERE updated_at < \(cutoff) RETURNING content_id),
            parts AS (DELETE FROM ferry_blob_parts WHERE content_id IN (SELECT content_id FROM gone))
            SELECT count(*) FROM gone
            """,
            logger: logger
        )
        var count = 0
        for try await gone in rows.decode(Int64.self) { count = Int(gone) }
        // Parts whose blob went with its space (a cascade this table cannot follow) are swept here too.
        try await client.query(
            """
            DELETE FROM ferry_blob_parts p WHERE NOT EXISTS (SELECT 1 FROM ferry_blobs b WHERE b.content_id = p.content_id)
              AND NOT EXISTS (SELECT 1 FROM ferry_blob_uploads u WHERE u.content_id = p.content_id)
            """,
            logger: logger
        )
        return count
    }
}

/// A blob's bytes from an offset, one stored part per `next()`, each fetched when the reader asks for it.
private struct PartChunks: AsyncSequence, Sendable {
    let store: PostgresBlobStore
    let key: BlobKey
    let offset: Int64

    struct AsyncIterator: AsyncIteratorProtocol {
        let store: PostgresBlobStore
        let key: BlobKey
        var position: Int64

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await store.part(key, at: position) else { return nil }
            position += Int64(chunk.readableBytes)
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(store: store, key: key, position: offset) }
}
