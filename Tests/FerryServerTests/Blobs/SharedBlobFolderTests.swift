import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import NIOCore
import Testing

/// Blob bytes in files beside PostgreSQL (`--blob-dir`): a folder every instance mounts, its uploads locked among
/// all the processes that share it.
@Suite("Blobs: a folder shared by several instances")
struct SharedBlobFolderTests {
    /// A body that sends `first`, then waits for `release()` before sending `rest`: an upload still arriving.
    final class HeldBody: Sendable {
        let stream: AsyncStream<ByteBuffer>
        private let continuation: AsyncStream<ByteBuffer>.Continuation
        private let rest: [UInt8]

        init(first: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
            (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
            continuation.yield(ByteBuffer(bytes: first))
            self.rest = Array(rest)
        }

        func release() {
            continuation.yield(ByteBuffer(bytes: rest))
            continuation.finish()
        }
    }

    static func bytes(_ count: Int, seed: Int = 0) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7 &+ seed) } }

    static func body(_ bytes: ArraySlice<UInt8>) -> AsyncStream<ByteBuffer> { UploadBody.pieces(bytes, of: 64_000) }

    @Test("bytes hashed as they arrive name what the folder holds: written by one store or two, begun again under the same id by the other, or begun before the token existed")
    func runningHashes() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = try FileBlobStore(folder: folder.url.path()), second = try FileBlobStore(folder: folder.url.path())
        let space = UUID(), length = 300_000, half = 120_000
        func start(_ bytes: [UInt8]) -> (UploadID, String) {
            let hash = TestFiles.sha256(Data(bytes))
            return (UploadID(space: space, sha256: hash), hash)
        }

        // One store writes everything, in two requests.
        let whole = Self.bytes(length, seed: 1)
        let (one, oneHash) = start(whole)
        _ = try await first.append(one, length: Int64(length), at: 0, body: Self.body(whole[..<half]))
        _ = try await first.append(one, length: Int64(length), at: Int64(half), body: Self.body(whole[half...]))
        #expect(try await first.complete(one, space: space, expected: oneHash).sha256 == oneHash)

        // The first half through one store, the rest through the other, completed by the first.
        let mixed = Self.bytes(length, seed: 2)
        let (two, twoHash) = start(mixed)
        _ = try await first.append(two, length: Int64(length), at: 0, body: Self.body(mixed[..<half]))
        _ = try await second.append(two, length: Int64(length), at: Int64(half), body: Self.body(mixed[half...]))
        #expect(try await first.complete(two, space: space, expected: nil).sha256 == twoHash)

        // The first store holds the hash of X's first half; the other discards the upload and begins it again under the
        // same id with Y's first half; the first then receives X's rest. The folder holds Y's half and X's rest: the
        // claimed hash (X's) must be refused, not taken from the first store's running hash.
        let claimed = Self.bytes(length, seed: 3), other = Self.bytes(length, seed: 4)
        let (three, threeHash) = start(claimed)
        _ = try await first.append(three, length: Int64(length), at: 0, body: Self.body(claimed[..<half]))
        try await second.discard(three)
        _ = try await second.append(three, length: Int64(length), at: 0, body: Self.body(other[..<half]))
        _ = try await first.append(three, length: Int64(length), at: Int64(half), body: Self.body(claimed[half...]))
        await #expect(throws: BlobStoreError.hashMismatch) { try await first.complete(three, space: space, expected: threeHash) }
        #expect(try await first.size(of: BlobKey(space: space, sha256: threeHash)) == nil)

        // An upload begun by an older version (its length file holds the length only) is hashed by reading it back.
        let old = Self.bytes(length, seed: 5)
        let (four, fourHash) = start(old)
        let uploads = folder.url.appending(path: "uploads")
        try Data(old[..<half]).write(to: uploads.appending(path: four.description))
        try Data(String(length).utf8).write(to: uploads.appending(path: "\(four.description).length"))
        _ = try await second.append(four, length: Int64(length), at: Int64(half), body: Self.body(old[half...]))
        #expect(try await second.complete(four, space: space, expected: fourHash).sha256 == fourHash)
    }

    @Test("two stores on one folder (two processes): an upload one is writing is busy for the other, which then goes on from where it stopped")
    func uploadLockedAcrossStores() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = try FileBlobStore(folder: folder.url.path()), second = try FileBlobStore(folder: folder.url.path())
        let bytes = Self.bytes(100_000), space = UUID()
        let hash = TestFiles.sha256(Data(bytes))
        let id = UploadID(space: space, sha256: hash)

        let held = HeldBody(first: bytes[..<40_000], rest: bytes[40_000..<60_000])
        let writing = Task { try await first.append(id, length: Int64(bytes.count), at: 0, body: held.stream) }
        try await eventually("the first store is writing") { try await second.upload(id)?.received == 40_000 }
        await #expect(throws: BlobStoreError.busy) {
            try await second.append(id, length: Int64(bytes.count), at: 40_000, body: HeldBody(first: bytes[40_000...], rest: []).stream)
        }
        await #expect(throws: BlobStoreError.busy) { try await second.discard(id) }
        held.release()
        #expect(try await writing.value == 60_000)

        // The lock is free again: the other store appends the rest and completes the blob.
        let finished = HeldBody(first: bytes[60_000...], rest: [])
        finished.release()
        #expect(try await second.append(id, length: Int64(bytes.count), at: 60_000, body: finished.stream) == Int64(bytes.count))
        #expect(try await second.complete(id, space: space, expected: hash) == BlobKey(space: space, sha256: hash))
        #expect(try await first.size(of: BlobKey(space: space, sha256: hash)) == Int64(bytes.count))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.appending(path: "uploads").path())
        #expect(left.isEmpty, "the upload's files, its lock included, are gone: \(left)")
    }

    @Test("two instances on one PostgreSQL and one blob folder: a file uploaded through one is read through the other, from the folder")
    func twoInstances() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            var first = database.serverConfiguration
            first.schemaFiles = [try database.writeSchema(try ExampleSchemas.text("tabletnotes.yaml"))]
            first.auth.jwtSecret = SharedKeysTests.secret
            first.useFastPasswordHashing()
            first.blobDirectory = database.folder + "/shared-blobs"
            var second = first
            first.dataDirectory = database.folder + "/first"
            second.dataDirectory = database.folder + "/second"
            let a = try await LiveServer.start(first), b = try await LiveServer.start(second)
            defer { Task { await a.stop(); await b.stop() } }

            let phone = try await SyncDevice.signUp(a)
            let tablet = try await SyncDevice(auth: AuthHarness(server: b), session: phone.session).sibling()
            let bytes = Data(Self.bytes(2_500_000))
            let hash = TestFiles.sha256(bytes)
            let path = BlobRoutesTests.path(phone.userID, hash)

            let half = try await phone.patch(path, bytes.prefix(1_000_000), offset: 0, length: bytes.count)
            #expect(half.status == 204)
            // The other instance sees the upload in progress and takes the rest.
            let head = try await tablet.request("HEAD", path)
            #expect(head.status == 404 && head.header("Upload-Offset") == "1000000")
            let rest = try await tablet.patch(path, bytes.suffix(from: 1_000_000), offset: 1_000_000, length: bytes.count)
            #expect(rest.status == 204 && rest.header("Upload-Offset") == "\(bytes.count)")

            let whole = try await phone.request("GET", path)
            #expect(whole.status == 200 && whole.body == bytes)
            let file = "\(database.folder)/shared-blobs/blobs/\(phone.userID.lowercasedText)/\(hash)"
            #expect(FileManager.default.contents(atPath: file) == bytes, "the bytes are a file in the shared folder")
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try await database.integer("SELECT count(*) FROM ferry_blob_parts") == 0, "no byte went into PostgreSQL")
        }
    }

    @Test("a blob folder on SQLite is refused at start-up: there blobs are files in the data folder, where backups include them")
    func refusedOnSQLite() async throws {
        try await TestDatabase.with(.sqlite) { database in
            var configuration = database.serverConfiguration
            configuration.blobDirectory = database.folder + "/elsewhere"
            let error = await #expect(throws: ServerStartupError.self) { _ = try await LiveServer.start(configuration) }
            #expect(error?.code == .invalidConfiguration)
            #expect(!FileManager.default.fileExists(atPath: database.folder + "/elsewhere"))
        }
    }
}
