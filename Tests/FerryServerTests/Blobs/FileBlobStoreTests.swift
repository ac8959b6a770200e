import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import NIOCore
import Synchronization
import Testing

/// The file store's writes: off the threads that serve requests, and every byte a body delivered kept.
@Suite("Blobs: the file store's writes")
struct FileBlobStoreTests {
    @Test("twice as many blob reads as there are cores, each waiting in `open` (a FIFO with no writer yet), leave tasks running")
    func waitingFilesLeaveThePoolFree() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try FileBlobStore(folder: folder.url.path())
        let space = UUID()
        let spaceFolder = folder.url.path() + "/blobs/" + space.lowercasedText
        try FileManager.default.createDirectory(atPath: spaceFolder, withIntermediateDirectories: true)
        // Twice the cooperative threads, but no more than the file-work threads, so no reader waits for a thread.
        let count = min(ProcessInfo.processInfo.activeProcessorCount * 2, FileWork.threadCount)
        let keys = (0..<count).map { index in BlobKey(space: space, sha256: String(format: "%064x", index)) }
        for key in keys { #expect(mkfifo(spaceFolder + "/" + key.sha256, 0o600) == 0) }

        let readers = keys.map { key in
            Task {
                // Reading a FIFO fails once it opens (it has no offsets): what counts is that `open` waited.
                _ = try? await store.read(key, from: 0).reduce(0) { $0 + $1.readableBytes }
            }
        }
        // A thread of its own lets the readers go after 3 s, whatever happens here: it opens each FIFO read-write,
        // which never blocks, and keeps it open until the readers are done.
        let paths = keys.map { spaceFolder + "/" + $0.sha256 }
        let writers = Mutex<[Int32]>([])
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 3)
            writers.withLock { $0 = paths.map { open($0, O_RDWR) } }
        }
        defer { writers.withLock { $0.forEach { close($0) } } }
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(300))  // every reader is in `open` by now
        let sum = await Task.detached { (1...1000).reduce(0, +) }.value
        let waited = ContinuousClock.now - start
        #expect(sum == 500_500)
        #expect(waited < .seconds(2), "a task waited \(waited) for a cooperative thread while blob files blocked")
        for reader in readers { await reader.value }
    }

    @Test("a body that breaks off after many pieces leaves every piece it delivered in the upload, which resumes from there")
    func brokenBodyKeepsItsPieces() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try FileBlobStore(folder: folder.url.path())
        let bytes = (0..<5_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let hash = TestFiles.sha256(Data(bytes)), space = UUID()
        let id = UploadID(space: space, sha256: hash)
        let delivered = 3_000_000
        let broken = UploadBody.brokenOff(bytes, after: delivered)
        await #expect(throws: CancellationError.self) { try await store.append(id, length: Int64(bytes.count), at: 0, body: broken) }
        #expect(try await store.upload(id) == UploadProgress(length: Int64(bytes.count), received: Int64(delivered)))

        #expect(try await store.append(id, length: Int64(bytes.count), at: Int64(delivered), body: UploadBody.pieces(bytes[delivered...])) == Int64(bytes.count))
        #expect(try await store.complete(id, space: space, expected: hash) == BlobKey(space: space, sha256: hash))
    }

    @Test("an upload whose request is cancelled mid-body still closes and unlocks: another store goes on from what arrived")
    func cancelledUpload() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try FileBlobStore(folder: folder.url.path()), other = try FileBlobStore(folder: folder.url.path())
        let bytes = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let hash = TestFiles.sha256(Data(bytes)), space = UUID()
        let id = UploadID(space: space, sha256: hash)
        let (body, arriving) = AsyncStream.makeStream(of: ByteBuffer.self)
        arriving.yield(ByteBuffer(bytes: bytes[..<1_000_000]))
        let request = Task { try await store.append(id, length: Int64(bytes.count), at: 0, body: body) }
        try await eventually("the first piece is written") { try await other.upload(id)?.received == 1_000_000 }
        request.cancel()  // the request's deadline passed, or the server is shutting down
        _ = try? await request.value

        // Had the closing steps been skipped for the cancelled task, the lock (an flock) would still be held.
        let rest = try await other.append(id, length: Int64(bytes.count), at: 1_000_000, body: UploadBody.pieces(bytes[1_000_000...]))
        #expect(rest == Int64(bytes.count))
        #expect(try await other.complete(id, space: space, expected: hash) == BlobKey(space: space, sha256: hash))
    }

    @Test("a lock let go but still held for a moment by a copy of its descriptor (a child process being started) is waited for, not answered busy")
    func lingeringLockIsWaitedFor() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try FileBlobStore(folder: folder.url.path())
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }
        let hash = TestFiles.sha256(Data(bytes)), space = UUID()
        let id = UploadID(space: space, sha256: hash)
        #expect(try await store.append(id, length: Int64(bytes.count), at: 0, body: UploadBody.pieces(bytes[..<100_000])) == 100_000)
        // posix_spawn copies every descriptor into the child, which holds the lock's open file until it closes them.
        let copy = open(folder.url.appending(path: "uploads/\(id.description).lock").path(), O_RDWR | O_CLOEXEC)
        try #require(copy >= 0 && flock(copy, LOCK_EX | LOCK_NB) == 0)
        Thread.detachNewThread {
            usleep(1_000)
            close(copy)
        }
        #expect(try await store.append(id, length: Int64(bytes.count), at: 100_000, body: UploadBody.pieces(bytes[100_000...])) == Int64(bytes.count))
    }

    @Test("completing an upload waits for a duplicate request that holds its lock for a moment, instead of failing busy")
    func completionWaitsForTheLock() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try FileBlobStore(folder: folder.url.path())
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let hash = TestFiles.sha256(Data(bytes)), space = UUID()
        let id = UploadID(space: space, sha256: hash)
        #expect(try await store.append(id, length: Int64(bytes.count), at: 0, body: UploadBody.pieces(bytes[...])) == Int64(bytes.count))
        // A duplicate request at the end holds the lock while its (empty) body has not ended.
        let (body, arriving) = AsyncStream.makeStream(of: ByteBuffer.self)
        let duplicate = Task { try await store.append(id, length: Int64(bytes.count), at: Int64(bytes.count), body: body) }
        try await Task.sleep(for: .milliseconds(100))
        let completion = Task { try await store.complete(id, space: space, expected: hash) }
        try await Task.sleep(for: .milliseconds(200))
        arriving.finish()
        #expect(try await duplicate.value == Int64(bytes.count))
        #expect(try await completion.value == BlobKey(space: space, sha256: hash))
    }
}
