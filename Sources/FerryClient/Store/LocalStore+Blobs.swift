import FerryCore
import FerrySecurity
import Foundation
import GRDB

/// One queued blob transfer: an upload of a file attached on this device, or a download of one a record names.
public struct BlobTransfer: Sendable, Hashable, Codable {
    /// Which way the bytes go.
    public enum Direction: String, Sendable, Hashable, Codable {
        case upload, download
    }

    /// The space of the record that names the blob.
    public var space: UUID
    /// The blob.
    public var blob: BlobReference
    public var direction: Direction
    /// The collection and field that named it (the download policy is chosen by them).
    public var collection: String
    public var field: String
    /// Bytes the server confirmed (upload) or this device holds (download): where a resumed transfer starts.
    public var confirmed: Int64
    /// Failed attempts so far.
    public var attempts: Int
    /// When the next attempt may start, after a failure.
    public var retryAt: Date?
    /// Whether the transfer gave up for good (the server refused the file); ``lastError`` says why.
    public var failed: Bool
    /// Why the last attempt failed.
    public var lastError: String?
}

/// The blob cache and the transfer queue. Files are named by their SHA-256 under ``LocalStore/blobDirectory``; the
/// queue is in the store, so transfers survive restarts and crashes and resume from their confirmed offset.
extension LocalStore {
    /// Copies the file at `url` into the blob cache, hashing it as it streams (one chunk in memory), and returns the
    /// reference to write into a `blob` field. Writing that reference queues the upload, in the write's transaction.
    ///
    /// - Throws: ``StoreError`` `store_failed` when the file cannot be read or copied.
    public func attachFile(at url: URL, contentType: String? = nil) throws -> BlobReference {
        let temporary = blobDirectory.appending(path: "attach-\(UUID().uuidString).partial")
        let (hash, size) = try Self.storeFailure("copy \(url.lastPathComponent) into the blob cache") {
            try Self.copyHashing(from: url, to: temporary)
        }
        let type = contentType.flatMap { BlobReference.isValidContentType($0) ? $0 : nil } ?? BlobReference.defaultContentType
        let reference = BlobReference(sha256: hash, size: size, contentType: type)
        try Self.storeFailure("keep the attached file") {
            try moveIntoCache(temporary, reference, pinned: true)
        }
        return reference
    }

    /// Encrypts the file at `url` under `key`, a key of the end-to-end encrypted `space`, into the blob cache (chunk by
    /// chunk, ``FerrySecurity/BlobCipher``) and returns the reference to the ciphertext: its hash says nothing of the
    /// plaintext, and its content type is `application/octet-stream`. ``SyncEngine/attachFile(at:contentType:space:)``
    /// calls it with the space's current key.
    func attachEncryptedFile(at url: URL, key: SpaceKey, space: UUID) throws -> BlobReference {
        let temporary = blobDirectory.appending(path: "attach-\(UUID().uuidString).partial")
        let reference = try Self.storeFailure("encrypt \(url.lastPathComponent) into the blob cache") {
            try BlobCipher.encrypt(url, to: temporary, key: key, space: space)
            let size = (try FileManager.default.attributesOfItem(atPath: temporary.path())[.size] as? NSNumber)?.int64Value ?? 0
            return BlobReference(sha256: try Self.hashFile(temporary), size: size)
        }
        try Self.storeFailure("keep the attached file") {
            try moveIntoCache(temporary, reference, sealed: true, pinned: true)
            // This device's own reads need no decryption.
            try? FileManager.default.createDirectory(at: plainDirectory, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: plainURL(reference.sha256))
            try FileManager.default.copyItem(at: url, to: plainURL(reference.sha256))
        }
        return reference
    }

    /// The cached file of `reference`, or `nil` when this device does not hold it (yet). Counts as an access for
    /// the cache's least-recently-used eviction.
    public func cachedFile(for reference: BlobReference) throws -> URL? {
        let url = cacheURL(reference.sha256)
        guard FileManager.default.fileExists(atPath: url.path()) else { return nil }
        try write { db in
            try db.execute(
                sql: "UPDATE ferry_blob_cache SET last_access_at = ?, rowid = \(Self.nextAccessRowID) WHERE sha256 = ?",
                arguments: [Timestamp.format(now()), reference.sha256]
            )
        }
        return url
    }

    /// An access moves its entry's rowid past every other, so that accesses within one millisecond (the resolution of
    /// `last_access_at`) still evict in the order they happened: least recently used is by time, then by rowid.
    private static let nextAccessRowID = "(SELECT MAX(rowid) + 1 FROM ferry_blob_cache)"

    /// The transfer queue, uploads first, oldest first.
    public func blobTransfers() throws -> [BlobTransfer] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM ferry_blob_transfers ORDER BY direction DESC, created_at").compactMap(Self.transfer)
        }
    }

    /// The bytes the cache holds.
    public func blobCacheSize() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM ferry_blob_cache") ?? 0 }
    }

    func cacheURL(_ hash: String) -> URL { blobDirectory.appending(path: hash) }
    /// Decrypted copies of encrypted spaces' blobs, by the ciphertext's hash.
    var plainDirectory: URL { blobDirectory.appending(path: "plain") }
    func plainURL(_ hash: String) -> URL { plainDirectory.appending(path: hash) }
    func partialURL(_ transfer: BlobTransfer) -> URL { blobDirectory.appending(path: "\(transfer.blob.sha256).partial") }

    /// Moves a checked file into the cache under its hash and indexes it.
    /// - Parameter pinned: an attached file, kept from eviction until its upload finishes.
    func moveIntoCache(_ file: URL, _ reference: BlobReference, sealed: Bool = false, pinned: Bool = false) throws {
        let target = cacheURL(reference.sha256)
        if FileManager.default.fileExists(atPath: target.path()) {
            try? FileManager.default.removeItem(at: file)
        } else {
            try FileManager.default.moveItem(at: file, to: target)
        }
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO ferry_blob_cache (sha256, size, sealed, pinned, last_access_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (sha256) DO UPDATE SET last_access_at = excluded.last_access_at, pinned = MAX(pinned, excluded.pinned),
                      rowid = \(Self.nextAccessRowID)
                    """,
                arguments: [reference.sha256, reference.size, sealed, pinned, Timestamp.format(now())]
            )
        }
    }

    /// Queues the upload of every blob a local write names whose file is in the cache, in the write's transaction:
    /// a record is never pushed before its files (``SyncPass`` holds the outbox at the first entry whose upload waits).
    /// - Throws: ``StoreError`` `encryption_required` for a file attached in clear to a record of an encrypted space.
    func queueUploads(_ db: Database, space: UUID, collection: CollectionDefinition, fields: [String: JSONValue]) throws {
        for field in collection.blobFields {
            guard let value = fields[field.name], !value.isNull, let reference = try? BlobReference(json: value) else { continue }
            guard let sealed = try Bool.fetchOne(db, sql: "SELECT sealed FROM ferry_blob_cache WHERE sha256 = ?", arguments: [reference.sha256])
            else { continue }
            if !sealed, try isKnownEncrypted(db, space) {
                throw StoreError(
                    code: .encryptionRequired,
                    message: "\(collection.name).\(field.name) names a file attached in clear, and space \(Self.text(space)) is end-to-end encrypted: attach it with SyncEngine.attachFile(at:contentType:space:)."
                )
            }
            try insertTransfer(db, space: space, reference: reference, direction: .upload, collection: collection.name, field: field.name)
        }
    }

    /// Queues the download of every blob a pulled record names that the cache lacks, in the apply's transaction.
    func queueDownloads(_ db: Database, space: UUID, collection: CollectionDefinition, fields: [String: JSONValue]) throws {
        for field in collection.blobFields {
            guard let value = fields[field.name], !value.isNull, let reference = try? BlobReference(json: value) else { continue }
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_blob_cache WHERE sha256 = ?)", arguments: [reference.sha256]) != true
            else { continue }
            try insertTransfer(db, space: space, reference: reference, direction: .download, collection: collection.name, field: field.name)
        }
    }

    private func insertTransfer(
        _ db: Database, space: UUID, reference: BlobReference, direction: BlobTransfer.Direction, collection: String, field: String
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO ferry_blob_transfers (space, sha256, direction, size, content_type, collection, field, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
            arguments: [Self.text(space), reference.sha256, direction.rawValue, reference.size, reference.contentType, collection, field, Timestamp.format(now())]
        )
    }

    /// Records the bytes confirmed so far.
    func confirmTransfer(_ transfer: BlobTransfer, at offset: Int64) throws {
        try write { db in
            try db.execute(
                sql: "UPDATE ferry_blob_transfers SET confirmed = ?, attempts = 0, retry_at = NULL, last_error = NULL WHERE space = ? AND sha256 = ? AND direction = ?",
                arguments: [offset, Self.text(transfer.space), transfer.blob.sha256, transfer.direction.rawValue]
            )
        }
    }

    /// Removes a finished transfer; a finished upload's file may be evicted from then on (the server holds it).
    func finishTransfer(_ transfer: BlobTransfer) throws {
        try write { db in
            if transfer.direction == .upload {
                try db.execute(sql: "UPDATE ferry_blob_cache SET pinned = 0 WHERE sha256 = ?", arguments: [transfer.blob.sha256])
            }
            try db.execute(
                sql: "DELETE FROM ferry_blob_transfers WHERE space = ? AND sha256 = ? AND direction = ?",
                arguments: [Self.text(transfer.space), transfer.blob.sha256, transfer.direction.rawValue]
            )
        }
    }

    /// Notes a failed attempt: retried after `retryAt`, or never when `permanently`.
    func failTransfer(_ transfer: BlobTransfer, error: String, retryAt: Date?, permanently: Bool) throws {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE ferry_blob_transfers SET attempts = attempts + 1, retry_at = ?, failed = ?, last_error = ?
                    WHERE space = ? AND sha256 = ? AND direction = ?
                    """,
                arguments: [retryAt.map(Timestamp.format), permanently, String(error.prefix(500)), Self.text(transfer.space), transfer.blob.sha256, transfer.direction.rawValue]
            )
        }
    }

    /// The lowest outbox entry that names a blob whose upload has not finished (and has not failed for good): the push
    /// sends only the entries below it, so the server never sees a record before its file.
    func firstEntryWaitingForUpload() async throws -> Int64? {
        try await read { db in
            let waiting = try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM ferry_blob_transfers WHERE direction = 'upload' AND failed = 0")
            var lowest: Int64?
            for hash in waiting {
                if let id = try Int64.fetchOne(db, sql: "SELECT MIN(mutation_id) FROM ferry_outbox WHERE instr(fields, ?) > 0", arguments: [hash]) {
                    lowest = min(lowest ?? id, id)
                }
            }
            return lowest
        }
    }

    /// Deletes least-recently-used cached files the server holds until the cache is at most `limit` bytes. Files
    /// attached on this device are never evicted before their upload finishes.
    @discardableResult
    public func evictBlobs(toFit limit: Int64) throws -> Int {
        let victims: [(String, Int64)] = try read { db in
            var total = try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM ferry_blob_cache") ?? 0
            guard total > limit else { return [] }
            var chosen: [(String, Int64)] = []
            let rows = try Row.fetchAll(db, sql: """
                SELECT sha256, size FROM ferry_blob_cache
                WHERE pinned = 0 AND sha256 NOT IN (SELECT sha256 FROM ferry_blob_transfers WHERE direction = 'upload' AND failed = 0)
                ORDER BY last_access_at, rowid
                """)
            for row in rows where total > limit {
                let size: Int64 = row["size"]
                chosen.append((row["sha256"], size))
                total -= size
            }
            return chosen
        }
        for (hash, _) in victims {
            try write { db in try db.execute(sql: "DELETE FROM ferry_blob_cache WHERE sha256 = ?", arguments: [hash]) }
            try? FileManager.default.removeItem(at: cacheURL(hash))
            try? FileManager.default.removeItem(at: plainURL(hash))
        }
        return victims.count
    }

    private static func transfer(_ row: Row) -> BlobTransfer? {
        guard let space = UUID(uuidString: row["space"]), let direction = BlobTransfer.Direction(rawValue: row["direction"]) else { return nil }
        let retry: String? = row["retry_at"]
        return BlobTransfer(
            space: space, blob: BlobReference(sha256: row["sha256"], size: row["size"], contentType: row["content_type"]),
            direction: direction, collection: row["collection"], field: row["field"], confirmed: row["confirmed"], attempts: row["attempts"],
            retryAt: retry.flatMap(Timestamp.parse), failed: (row["failed"] as Int64? ?? 0) != 0, lastError: row["last_error"]
        )
    }

    /// Copies `source` to `target` (0600) in chunks, returning the SHA-256 and size of the bytes copied.
    static func copyHashing(from source: URL, to target: URL) throws -> (String, Int64) {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        _ = try OwnerOnlyPath.file(target.path())
        let output = try FileHandle(forWritingTo: target)
        defer { try? output.close() }
        var hasher = ContentHasher()
        var size: Int64 = 0
        while let chunk = try input.readChunk(upToCount: fileReadSize) {
            hasher.update(chunk)
            try output.write(contentsOf: chunk)
            FileDurability.startWriteback(output.fileDescriptor, offset: size, length: Int64(chunk.count))  // so the sync below waits for less
            size += Int64(chunk.count)
        }
        try output.synchronize()
        return (hasher.finalize(), size)
    }

    /// The SHA-256 of a file, read in chunks.
    static func hashFile(_ url: URL) throws -> String {
        let input = try FileHandle(forReadingFrom: url)
        defer { try? input.close() }
        var hasher = ContentHasher()
        while let chunk = try input.readChunk(upToCount: fileReadSize) { hasher.update(chunk) }
        return hasher.finalize()
    }

    /// The size of each read of a file being attached or checked (the transfers' chunks are the engine's).
    static let fileReadSize = 4 << 20
}
