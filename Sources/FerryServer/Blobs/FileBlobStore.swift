import FerryCore
import FerrySecurity
import Foundation
import NIOCore
import Synchronization

/// Blobs as files under a folder (the data folder on SQLite; with PostgreSQL, `--blob-dir`, a volume every instance
/// mounts): `blobs/<space>/<sha256>` for complete ones, `uploads/<id>` (with `uploads/<id>.length`) for uploads in
/// progress. Folders are 0700 and files 0600, like the database.
///
/// A complete blob is renamed into place only after its hash was checked, so a file under `blobs/` is always whole.
/// Every file call runs through ``FileWork``, never on the threads that serve requests; received bytes are written
/// while more arrive (``writeBatchSize`` at a time), and reads go in chunks of ``chunkSize``. Several processes may
/// share the folder: an upload is written, completed or discarded by one request at a time among them all (a lock
/// file, `uploads/<id>.lock`, held with `flock`).
final class FileBlobStore: BlobStore {
    let root: String
    /// The size of each read.
    static let chunkSize = 256 * 1024
    /// How many received bytes an upload gathers while one write runs: a PostgreSQL part's size. Smaller batches cost
    /// more trips to the file-work threads (256 KiB: a tenth more CPU per upload than writing on the request's thread).
    static let writeBatchSize = 1024 * 1024
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
        let path = blobPath(key)
        return try await FileWork.run { Self.fileSize(path) }
    }

    func upload(_ id: UploadID) async throws -> UploadProgress? {
        try await FileWork.run { try self.progress(id) }
    }

    private func progress(_ id: UploadID) throws -> UploadProgress? {
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
        guard let lock = try await takeLock(lockPath) else { throw BlobStoreError.busy }
        let release: @Sendable () -> Void = { [self] in
            // No upload under this id (none was, or it ended): its lock file goes too.
            if !FileManager.default.fileExists(atPath: uploadPath(id) + ".length") { unlink(lockPath) }
            lock.release()
        }
        do {
            let result = try await body()
            try await FileWork.run(release)
            return result
        } catch {
            try await FileWork.run(release)
            throw error
        }
    }

    /// The upload's lock, tried ``lockAttempts`` times 10 ms apart: a lock whose holder just let it go can still be
    /// held for a moment by a child process this one is starting (`posix_spawn` copies every descriptor into the
    /// child until it closes them), or by the previous request's last step on another instance. A request that writes
    /// holds it for as long as its body lasts, and is still found busy.
    private func takeLock(_ path: String) async throws -> ExclusiveFileLock? {
        for attempt in 1...Self.lockAttempts {
            if let lock = try await FileWork.run({ try ExclusiveFileLock.take(path) }) { return lock }
            if attempt < Self.lockAttempts { try await Task.sleep(for: .milliseconds(10)) }
        }
        return nil
    }

    static let lockAttempts = 5

    func append<Body: AsyncSequence & Sendable>(_ id: UploadID, length: Int64, at offset: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        try await exclusively(id) { try await appendExclusively(id, length: length, at: offset, body: body) }
    }

    private func appendExclusively<Body: AsyncSequence & Sendable>(_ id: UploadID, length: Int64, at offset: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer {
        let (descriptor, header) = try await FileWork.run { try self.openForAppending(id, length: length, at: offset) }
        // The bytes are hashed as they are written when this process wrote every byte before them, into this upload.
        var hasher = offset == 0 ? ContentHasher() : hashes.take(id).flatMap { entry in
            entry.content == header.token && entry.offset == offset ? entry.hasher : nil
        }
        // Pieces are written on a file-work thread while the next ones arrive: the first at once (so another instance
        // sees that the upload is under way), then in batches of ``writeBatchSize``, one written while the next gathers.
        // A trip per piece the connection read cost a fifth more CPU. A body that pauses leaves less than a batch
        // unwritten until it goes on or ends (it is written then, even when it breaks off); a process killed meanwhile
        // loses those bytes, which the upload's offset tells the client to send again.
        var received = offset, accepted = offset
        var pending: [ByteBuffer] = [], pendingBytes = 0
        var writing: Task<Written, Never>?
        var writeFailed = false
        func startWrite() {
            let (buffers, current) = (pending, hasher)
            (pending, pendingBytes) = ([], 0)
            let at = received
            writing = Task { await Self.append(buffers, to: descriptor, at: at, hashing: current) }
        }
        func finishWrite() async throws {
            guard let task = writing else { return }
            writing = nil
            let written = await task.value
            // After a failed write some of it may be in the file: the hash no longer says which bytes, and nothing
            // more may be appended after them.
            hasher = written.hasher
            received += written.count
            if let error = written.error {
                writeFailed = true
                throw error
            }
        }
        // Whatever arrives is kept, even when the body breaks off: that is where a resumed upload starts.
        var failure: (any Error)?
        do {
            for try await buffer in body {
                let count = Int(min(Int64(buffer.readableBytes), length - accepted))
                if count > 0 {
                    pending.append(buffer.getSlice(at: buffer.readerIndex, length: count)!)
                    (pendingBytes, accepted) = (pendingBytes + count, accepted + Int64(count))
                }
                if count < buffer.readableBytes { throw BlobStoreError.beyondLength }
                if writing == nil, pendingBytes > 0 {
                    startWrite()
                } else if pendingBytes >= Self.writeBatchSize {
                    try await finishWrite()
                    startWrite()
                }
            }
        } catch {
            failure = error
        }
        do {
            try await finishWrite()
            if !pending.isEmpty, !writeFailed {
                startWrite()
                try await finishWrite()
            }
        } catch {
            failure = failure ?? error
        }
        // The bytes written are in the page cache, which a crash of this process keeps, and on their way to the disk:
        // the completion syncs them before the blob is named. A power loss may cost the tail of an unfinished upload (a
        // smaller offset, which the client sends from), never a stored blob. Syncing each request instead held every
        // chunk's reply until its bytes were on the disk, with nothing moving meanwhile: a third of an upload's time.
        // A write error a network file system reports only when the file is closed leaves it short of what was hashed.
        // (A local disk's failed writeback is reported to the completion's sync, unless the kernel dropped the file's
        // inode meanwhile; the bytes in the page cache then still match the hash, and a device that downloads the
        // blob hashes what it receives and refuses other bytes.)
        let closed = try await FileWork.run { close(descriptor) == 0 }
        if closed, let hasher, let token = header.token {
            hashes.put(id, RunningUploadHashes.Entry(content: token, offset: received, hasher: hasher))
        }
        if let failure { throw failure }
        return received
    }

    /// Opens upload `id` for appending at `offset` (beginning it, with a new token, when it has no length file),
    /// and returns its descriptor and header.
    private func openForAppending(_ id: UploadID, length: Int64, at offset: Int64) throws -> (Int32, UploadHeader) {
        var header: UploadHeader
        let isNew: Bool
        if let declared = try self.header(id) {
            guard declared.length == length else { throw BlobStoreError.lengthMismatch(declared: declared.length) }
            (header, isNew) = (declared, false)
        } else {
            (header, isNew) = (UploadHeader(length: length, token: UUID()), true)
            try store(header, id)
        }
        let descriptor = open(uploadPath(id), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        do {
            let received = Int64(lseek(descriptor, 0, SEEK_END))
            guard received == offset else { throw BlobStoreError.offsetMismatch(current: received) }
            // An upload's first bytes get a token of their own, even under a length file left behind by one that ended
            // half-removed: no running hash of an earlier upload under this id can match it.
            if offset == 0, !isNew {
                header.token = UUID()
                try store(header, id)
            }
            return (descriptor, header)
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// What one trip to a file-work thread wrote: how many bytes went in, the hash with them (`nil` after a failed
    /// write), and the error that stopped it.
    private struct Written: Sendable {
        var count: Int64 = 0
        var hasher: ContentHasher?
        var error: (any Error)?
    }

    /// Writes `buffers` in order at the end of the file, `offset`, on a file-work thread, and starts writing them to the
    /// disk; meanwhile another file-work thread hashes them. One after the other, the kernel's copy into the page cache
    /// and SHA-256 were most of an upload's time on the server.
    private static func append(_ buffers: [ByteBuffer], to descriptor: Int32, at offset: Int64, hashing hasher: ContentHasher?) async -> Written {
        async let hashed = Self.hashed(buffers, continuing: hasher)
        var written: Written
        do {
            written = try await FileWork.run {
                var written = Written()
                for buffer in buffers {
                    do {
                        try buffer.withUnsafeReadableBytes { try writeAll(descriptor, $0) }
                    } catch {
                        return Written(count: written.count, error: error)
                    }
                    written.count += Int64(buffer.readableBytes)
                }
                FileDurability.startWriteback(descriptor, offset: offset, length: written.count)
                return written
            }
        } catch {
            written = Written(error: error)
        }
        let hasher = await hashed
        if written.error == nil { written.hasher = hasher }
        return written
    }

    /// `hasher` continued over `buffers`, on a file-work thread (the request threads, one per core, stay free for
    /// requests); `nil` without a hasher, or when the pool has stopped (the completion then hashes the file).
    private static func hashed(_ buffers: [ByteBuffer], continuing hasher: ContentHasher?) async -> ContentHasher? {
        guard let hasher else { return nil }
        return try? await FileWork.run {
            var running = hasher
            for buffer in buffers { buffer.withUnsafeReadableBytes { running.update($0) } }
            return running
        }
    }

    func seal(_ id: UploadID) async throws -> Int64 {
        try await exclusively(id) {
            try await FileWork.run {
                guard var header = try self.header(id) else { throw BlobStoreError.uploadNotFound }
                header.length = Self.fileSize(self.uploadPath(id)) ?? 0
                try self.store(header, id)
                return header.length
            }
        }
    }

    func complete(_ id: UploadID, space: UUID, expected: String?) async throws -> BlobKey {
        // The request that wrote the last byte completes the upload. A duplicate of it (a client's retry, the same
        // PATCH sent twice) may hold the lock for the moment it takes to find the offset moved on: wait for that
        // rather than fail the request that did the work.
        for _ in 0..<Self.completionAttempts - 1 {
            do {
                return try await exclusively(id) { try await completeExclusively(id, space: space, expected: expected) }
            } catch BlobStoreError.busy {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        return try await exclusively(id) { try await completeExclusively(id, space: space, expected: expected) }
    }

    /// How many times a completion tries the upload's lock, 20 ms apart.
    static let completionAttempts = 100

    private func completeExclusively(_ id: UploadID, space: UUID, expected: String?) async throws -> BlobKey {
        let (progress, header) = try await FileWork.run { (try self.progress(id), try self.header(id)) }
        guard let progress, progress.isComplete else { throw BlobStoreError.uploadNotFound }
        let path = uploadPath(id)
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
            try await FileWork.run { self.removeUpload(id) }
            throw BlobStoreError.hashMismatch
        }
        let key = BlobKey(space: space, sha256: hash)
        try await FileWork.run {
            let folder = "\(self.root)/blobs/\(space.lowercasedText)"
            try OwnerOnlyPath.folder(folder)
            let blob = self.blobPath(key)
            if Self.fileSize(blob) == nil {
                // The bytes reach the disk before the name that says they are whole, and the name before the answer.
                do {
                    try FileDurability.synchronize(path)
                } catch let failure as FileDurability.WriteFailure {
                    self.removeUpload(id)  // what the disk holds is unknown: the client starts over
                    throw failure
                }
                guard rename(path, blob) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            } else {
                _ = utime(blob, nil)
            }
            self.removeUpload(id)
            // Also when the blob was there: the completion that renamed it may have failed before its folder synced.
            try FileDurability.synchronizeFolder(folder)
            try FileDurability.synchronizeFolder("\(self.root)/blobs")
        }
        return key
    }

    func discard(_ id: UploadID) async throws {
        try await exclusively(id) { try await FileWork.run { self.removeUpload(id) } }
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
        let path = blobPath(key)
        _ = try await FileWork.run { utime(path, nil) }
    }

    func read(_ key: BlobKey, from offset: Int64) async throws -> any AsyncSequence<ByteBuffer, any Error> & Sendable {
        FileChunks(path: blobPath(key), offset: offset)
    }

    func delete(_ key: BlobKey) async throws {
        let path = blobPath(key)
        _ = try await FileWork.run { unlink(path) }
    }

    func deleteAll(in spaces: Set<UUID>) async throws {
        let root = self.root
        try await FileWork.run {
            for space in spaces {
                let folder = "\(root)/blobs/\(space.lowercasedText)"
                guard FileManager.default.fileExists(atPath: folder) else { continue }
                try FileManager.default.removeItem(atPath: folder)
            }
        }
    }

    func blobs(storedBefore cutoff: Date) async throws -> [BlobKey] {
        let root = self.root
        return try await FileWork.run {
            let manager = FileManager.default
            var keys: [BlobKey] = []
            for folder in (try? manager.contentsOfDirectory(atPath: root + "/blobs")) ?? [] {
                guard let space = UUID(wireText: folder) else { continue }
                for name in (try? manager.contentsOfDirectory(atPath: "\(root)/blobs/\(folder)")) ?? [] where BlobReference.isValidHash(name) {
                    let modified = Self.modificationDate("\(root)/blobs/\(folder)/\(name)")
                    if let modified, modified < cutoff { keys.append(BlobKey(space: space, sha256: name)) }
                }
            }
            return keys
        }
    }

    func totals() async throws -> (count: Int, bytes: Int64) {
        let root = self.root
        return try await FileWork.run { Self.totals(root: root) }
    }

    private static func totals(root: String) -> (count: Int, bytes: Int64) {
        let manager = FileManager.default
        var totals: (count: Int, bytes: Int64) = (0, 0)
        for folder in (try? manager.contentsOfDirectory(atPath: root + "/blobs")) ?? [] where UUID(wireText: folder) != nil {
            for name in (try? manager.contentsOfDirectory(atPath: "\(root)/blobs/\(folder)")) ?? [] where BlobReference.isValidHash(name) {
                totals.count += 1
                totals.bytes += ((try? manager.attributesOfItem(atPath: "\(root)/blobs/\(folder)/\(name)"))?[.size] as? NSNumber)?.int64Value ?? 0
            }
        }
        return totals
    }

    func openUploads(in space: UUID) async throws -> Int {
        let (prefix, folder) = (space.lowercasedText + "-", root + "/uploads")
        return try await FileWork.run {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".length") }.count
        }
    }

    func discardUploads(writtenBefore cutoff: Date) async throws -> Int {
        let stale = try await FileWork.run {
            ((try? FileManager.default.contentsOfDirectory(atPath: self.root + "/uploads")) ?? []).compactMap { name -> UploadID? in
                guard !name.hasSuffix(".length"), let id = UploadID(parsing: name),
                      let modified = Self.modificationDate(self.uploadPath(id) + ".length"), modified < cutoff,
                      (Self.modificationDate(self.uploadPath(id)) ?? modified) < cutoff
                else { return nil }
                return id
            }
        }
        for id in stale { try? await discard(id) }
        return stale.count
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
            self.init(length: length, token: lines.dropFirst().first.flatMap { UUID(wireText: String($0)) })
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

/// A file's bytes from an offset, one chunk per `next()`, each read on a ``FileWork`` thread: the reader pulls, so a
/// slow client holds one chunk.
struct FileChunks: AsyncSequence, Sendable {
    let path: String
    let offset: Int64

    /// An open file, closed when the last reader lets go of it (a client that disconnects mid-download included).
    final class Descriptor: Sendable {
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
            let (path, offset, opened) = (self.path, self.offset, self.descriptor)
            let (file, buffer) = try await FileWork.run { try Self.readChunk(opened ?? Self.openFile(path), at: offset) }
            descriptor = file
            if buffer.readableBytes == 0 {
                descriptor = nil
                finished = true
                return nil
            }
            self.offset += Int64(buffer.readableBytes)
            return buffer
        }

        private static func openFile(_ path: String) throws -> Descriptor {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOENT) }
            return Descriptor(opened)
        }

        private static func readChunk(_ file: Descriptor, at offset: Int64) throws -> (Descriptor, ByteBuffer) {
            var buffer = ByteBufferAllocator().buffer(capacity: FileBlobStore.chunkSize)
            while true {
                var failure: Int32 = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: FileBlobStore.chunkSize) { bytes in
                    let count = pread(file.value, bytes.baseAddress!, FileBlobStore.chunkSize, off_t(offset))
                    if count < 0 { failure = errno }
                    return Swift.max(0, count)
                }
                // A failed read is not the end of the file: hashing a truncated read would name the whole file wrongly.
                if failure == EINTR { continue }
                if failure != 0 { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
                return (file, buffer)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path, offset: offset) }
}
