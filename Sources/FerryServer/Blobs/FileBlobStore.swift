import FerryCore
import FerrySecurity
import Foundation
import NIOPosix
import NIOCore
import Synchronization

/// Blobs as files under a folder (the data folder on SQLite; with PostgreSQL, `--blob-dir`, a volume every instance
/// mounts): `blobs/<space>/<sha256>` for complete ones, `uploads/<id>` (with `uploads/<id>.length`) for uploads in
/// progress. Folders are 0700 and files 0600, like the database.
///
/// A complete blob is renamed into place only after its hash was checked, so a file under `blobs/` is always whole.
/// Reads and writes go through blocking file calls in chunks of ``chunkSize``: one chunk of memory per request.
/// Several processes may share the folder: an upload is written, completed or discarded by one request at a time
/// among them all (a lock file, `uploads/<id>.lock`, held with `flock`).
final class FileBlobStore: BlobStore {
    let root: String
    /// The size of each read and of each buffer written.
    static let chunkSize = 256 * 1024
    private let writing = Mutex<Set<String>>([])
    /// The SHA-256 state of the uploads whose bytes this process wrote, so completing one reads nothing back.
    private let hashes = RunningUploadHashes()

    /// Opens (creating) the store under `folder/blobs` and `folder/uploads`.
    init(folder: String) throws {
        root = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        try OwnerOnlyPath.folder(root + "/blobs")
        try OwnerOnlyPath.folder(root + "/uploads")
    }

    private func blobPath(_ key: BlobKey) -> String { "\(root)/blobs/\(key.space.lowercasedText)/\(key.sha256)" }
    private func uploadPath(_ id: UploadID) -> String { "\(root)/uploads/\(id.text)" }

    func size(of key: BlobKey) async throws -> Int64? {
        Self.fileSize(blobPath(key))
    }

    func upload(_ id: UploadID) async throws -> UploadProgress? {
        guard let length = try header(id)?.length else { return nil }
        return UploadProgress(length: length, received: Self.fileSize(uploadPath(id)) ?? 0)
    }

    /// Runs `body` while no other request, of this process or another sharing the folder, writes, completes or
    /// discards upload `id` (``BlobStoreError/busy`` otherwise).
    private func exclusively<Result>(_ id: UploadID, _ body: () async throws -> Result) async throws -> Result {
        guard writing.withLock({ $0.insert(id.text).inserted }) else { throw BlobStoreError.busy }
        defer { _ = writing.withLock { $0.remove(id.text) } }
        // Two instances behind a load balancer can both be handed an upload (a client's retry lands on the second while
        // the first still drains the broken request, or two devices send one file): unlocked, both would append at the
        // same offset and the upload would grow past its length, never to complete.
        let lockPath = uploadPath(id) + ".lock"
        guard let lock = try ExclusiveFileLock.take(lockPath) else { throw BlobStoreError.busy }
        defer {
            // No upload under this id (none was, or it ended): its lock file goes too.
            if !FileManager.default.fileExists(atPath: uploadPath(id) + ".length") { unlink(lockPath) }
            lock.release()
        }
        return try await body()
    }

    func append<Body: AsyncSequence & Sendable>(_ id: UploadID, length: Int64, at offset: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        try await exclusively(id) { try await appendExclusively(id, length: length, at: offset, body: body) }
    }

    private func appendExclusively<Body: AsyncSequence & Sendable>(_ id: UploadID, length: Int64, at offset: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        var header: UploadHeader
        let isNew: Bool
        if let declared = try self.header(id) {
            guard declared.length == length else { throw BlobStoreError.lengthMismatch(declared: declared.length) }
            (header, isNew) = (declared, false)
        } else {
            (header, isNew) = (UploadHeader(length: length, token: UUID()), true)
            try store(header, id)
        }
        let path = uploadPath(id)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var received = Int64(lseek(descriptor, 0, SEEK_END))
        guard received == offset else { throw BlobStoreError.offsetMismatch(current: received) }
        // An upload's first bytes get a token of their own, even under a length file left behind by one that ended
        // half-removed: no running hash of an earlier upload under this id can match it.
        if offset == 0, !isNew {
            header.token = UUID()
            try store(header, id)
        }
        // The bytes are hashed as they are written when this process wrote every byte before them, into this upload.
        var hasher = offset == 0 ? ContentHasher() : hashes.take(id).flatMap { entry in
            entry.content == header.token && entry.offset == offset ? entry.hasher : nil
        }
        // Whatever arrives is kept and made durable, even when the body breaks off: that is where a resumed upload starts.
        defer {
            // A write error a network file system reports only now leaves the file short of what was hashed.
            if fsync(descriptor) != 0 { hasher = nil }
            if let hasher, let token = header.token { hashes.put(id, RunningUploadHashes.Entry(content: token, offset: received, hasher: hasher)) }
        }
        for try await buffer in body {
            let room = length - received
            let count = min(Int64(buffer.readableBytes), room)
            try buffer.withUnsafeReadableBytes { bytes in
                let kept = UnsafeRawBufferPointer(rebasing: bytes.prefix(Int(count)))
                do {
                    try Self.writeAll(descriptor, kept)
                } catch {
                    hasher = nil  // some of it may be in the file: the hash no longer says which bytes
                    throw error
                }
                hasher?.update(kept)
            }
            received += count
            if count < buffer.readableBytes { throw BlobStoreError.beyondLength }
        }
        return received
    }

    func seal(_ id: UploadID) async throws -> Int64 {
        try await exclusively(id) {
            guard var header = try header(id) else { throw BlobStoreError.uploadNotFound }
            header.length = Self.fileSize(uploadPath(id)) ?? 0
            try store(header, id)
            return header.length
        }
    }

    func complete(_ id: UploadID, space: UUID, expected: String?) async throws -> BlobKey {
        try await exclusively(id) { try await completeExclusively(id, space: space, expected: expected) }
    }

    private func completeExclusively(_ id: UploadID, space: UUID, expected: String?) async throws -> BlobKey {
        guard let progress = try await upload(id), progress.isComplete else { throw BlobStoreError.uploadNotFound }
        let path = uploadPath(id)
        let header = try header(id)
        let hash: String
        if let entry = hashes.take(id), let token = header?.token, entry.content == token, entry.offset == progress.length {
            hash = entry.hasher.finalize()
        } else {
            // Bytes another process wrote (or written before a restart): read back.
            var hasher = ContentHasher()
            for try await chunk in FileChunks(path: path, offset: 0) {
                chunk.withUnsafeReadableBytes { hasher.update($0) }
            }
            hash = hasher.finalize()
        }
        if let expected, expected != hash {
            removeUpload(id)
            throw BlobStoreError.hashMismatch
        }
        let key = BlobKey(space: space, sha256: hash)
        try OwnerOnlyPath.folder("\(root)/blobs/\(space.lowercasedText)")
        if Self.fileSize(blobPath(key)) == nil {
            guard rename(path, blobPath(key)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } else {
            try await touch(key)
        }
        removeUpload(id)
        return key
    }

    func discard(_ id: UploadID) async throws {
        try await exclusively(id) { removeUpload(id) }
    }

    /// Removes an upload's files: its length file first (an upload without one is none), its lock file last (the
    /// caller holds the lock: see ``ExclusiveFileLock``).
    private func removeUpload(_ id: UploadID) {
        _ = hashes.take(id)
        unlink(uploadPath(id) + ".length")
        unlink(uploadPath(id))
        unlink(uploadPath(id) + ".lock")
    }

    func touch(_ key: BlobKey) async throws {
        _ = utime(blobPath(key), nil)
    }

    func read(_ key: BlobKey, from offset: Int64) async throws -> any AsyncSequence<ByteBuffer, any Error> & Sendable {
        FileChunks(path: blobPath(key), offset: offset)
    }

    func delete(_ key: BlobKey) async throws {
        unlink(blobPath(key))
    }

    func deleteAll(in spaces: Set<UUID>) async throws {
        for space in spaces {
            let folder = "\(root)/blobs/\(space.lowercasedText)"
            guard FileManager.default.fileExists(atPath: folder) else { continue }
            try FileManager.default.removeItem(atPath: folder)
        }
    }

    func blobs(storedBefore cutoff: Date) async throws -> [BlobKey] {
        let manager = FileManager.default
        var keys: [BlobKey] = []
        for folder in (try? manager.contentsOfDirectory(atPath: root + "/blobs")) ?? [] {
            guard let space = UUID(uuidString: folder) else { continue }
            for name in (try? manager.contentsOfDirectory(atPath: "\(root)/blobs/\(folder)")) ?? [] where BlobReference.isValidHash(name) {
                let modified = Self.modificationDate("\(root)/blobs/\(folder)/\(name)")
                if let modified, modified < cutoff { keys.append(BlobKey(space: space, sha256: name)) }
            }
        }
        return keys
    }

    func totals() async throws -> (count: Int, bytes: Int64) {
        // A walk of every blob file: on NIO's thread pool, not a cooperative thread.
        let root = self.root
        return try await NIOThreadPool.singleton.runIfActive { Self.totals(root: root) }
    }

    private static func totals(root: String) -> (count: Int, bytes: Int64) {
        let manager = FileManager.default
        var (count, bytes): (Int, Int64) = (0, 0)
        for folder in (try? manager.contentsOfDirectory(atPath: root + "/blobs")) ?? [] where UUID(uuidString: folder) != nil {
            for name in (try? manager.contentsOfDirectory(atPath: "\(root)/blobs/\(folder)")) ?? [] where BlobReference.isValidHash(name) {
                count += 1
                bytes += ((try? manager.attributesOfItem(atPath: "\(root)/blobs/\(folder)/\(name)"))?[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        return (count, bytes)
    }

    func openUploads(in space: UUID) async throws -> Int {
        let prefix = space.lowercasedText + "-"
        return ((try? FileManager.default.contentsOfDirectory(atPath: root + "/uploads")) ?? [])
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".length") }.count
    }

    func discardUploads(writtenBefore cutoff: Date) async throws -> Int {
        var count = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root + "/uploads")) ?? [] where !name.hasSuffix(".length") {
            guard let id = UploadID(parsing: name), let modified = Self.modificationDate(uploadPath(id) + ".length"), modified < cutoff,
                  (Self.modificationDate(uploadPath(id)) ?? modified) < cutoff
            else { continue }
            try? await discard(id)
            count += 1
        }
        return count
    }

    /// What `uploads/<id>.length` holds: the upload's length, then a token naming this upload's bytes (a new one each
    /// time an upload is begun under the id, by any process), which a running hash must match.
    struct UploadHeader {
        var length: Int64
        /// `nil` in a file written before the token was (its upload is hashed by reading it back).
        var token: UUID?

        init(length: Int64, token: UUID?) {
            self.length = length
            self.token = token
        }

        init?(_ text: String) {
            let lines = text.split(separator: "\n")
            guard let first = lines.first, let length = Int64(first) else { return nil }
            self.init(length: length, token: lines.dropFirst().first.flatMap { UUID(uuidString: String($0)) })
        }

        var text: String { token.map { "\(length)\n\($0.lowercasedText)" } ?? String(length) }
    }

    private func header(_ id: UploadID) throws -> UploadHeader? {
        guard let data = FileManager.default.contents(atPath: uploadPath(id) + ".length") else { return nil }
        return UploadHeader(String(decoding: data, as: UTF8.self))
    }

    private func store(_ header: UploadHeader, _ id: UploadID) throws {
        try OwnerOnlyFile.write(Data(header.text.utf8), to: URL(fileURLWithPath: uploadPath(id) + ".length"))
    }

    /// Opened, not `stat`ed: a network file system revalidates a file at `open` (close-to-open), where a `stat` may
    /// answer from its attribute cache while another host appends to an upload.
    static func fileSize(_ path: String) -> Int64? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let end = lseek(descriptor, 0, SEEK_END)
        return end >= 0 ? Int64(end) : nil
    }

    private static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var written = 0
        while written < bytes.count {
            let result = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            written += result
        }
    }
}

/// A file's bytes from an offset, one chunk per `next()`: the reader pulls, so a slow client holds one chunk.
struct FileChunks: AsyncSequence, Sendable {
    let path: String
    let offset: Int64

    /// An open file, closed when the last reader lets go of it (a client that disconnects mid-download included).
    final class Descriptor {
        let value: Int32
        init(_ value: Int32) { self.value = value }
        deinit { close(value) }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        var offset: Int64
        var descriptor: Descriptor?
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            if finished { return nil }
            if descriptor == nil {
                let opened = open(path, O_RDONLY)
                guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOENT) }
                descriptor = Descriptor(opened)
            }
            let file = descriptor!.value
            var buffer = ByteBufferAllocator().buffer(capacity: FileBlobStore.chunkSize)
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: FileBlobStore.chunkSize) { bytes in
                Swift.max(0, pread(file, bytes.baseAddress!, FileBlobStore.chunkSize, off_t(offset)))
            }
            if count == 0 {
                descriptor = nil
                finished = true
                return nil
            }
            offset += Int64(count)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path, offset: offset) }
}
