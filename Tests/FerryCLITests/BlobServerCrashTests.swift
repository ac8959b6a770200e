import FerryClient
import FerryCore
import FerrySecurity
import FerryTesting
import Foundation
import Testing

/// The file blob store syncs an upload once, at its completion (docs/blobs.md): the bytes a reply acknowledged before
/// then live in the page cache and the file, which a killed server process keeps. Here the server is killed with
/// SIGKILL between acknowledged chunks and started again: its running hash is gone, so the completion reads the file
/// back, then syncs it, renames it and syncs its folders. On PostgreSQL the store is the same, under `--blob-dir`.
@Suite("Blobs: the server killed mid-upload")
struct BlobServerCrashTests {
    @Test("SIGKILL between acknowledged chunks, then a restart: the upload stands where the replies said, goes on from there, and stores the right bytes",
          arguments: TestEngine.available)
    func killedBetweenChunks(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let blobFolder = database.folder + "/blob-files"
            var served = try await ServedProcess.start(database, schema: "ops.yaml", adding: engine == .sqlite ? [] : ["--blob-dir", blobFolder])
            let transport = DefaultHTTPTransport(timeout: .seconds(30))
            let auth = AuthClient(
                endpoint: ServerEndpoint(baseURL: URL(string: served.baseURL)!, apiKey: served.anonKey), store: InMemorySessionStore(), transport: transport
            )
            let session = try await auth.signUp(email: uniqueEmail("blob-crash"), password: "correct horse 1")
            let remote = SyncClient(auth: auth)
            var random = SplitMix64(seed: 42)
            let bytes = Data((0..<(3 << 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            var hasher = ContentHasher()
            hasher.update(bytes)
            let blob = BlobReference(sha256: hasher.finalize(), size: Int64(bytes.count), contentType: "audio/mp4")
            let space = session.user.id

            var offset: Int64 = 0
            for _ in 0..<2 {
                offset = try await remote.uploadBlob(space: space, blob: blob, offset: offset, bytes: bytes[Int(offset)..<Int(offset) + (1 << 20)])
            }
            #expect(offset == 2 << 20)
            served.process.signal(SIGKILL)
            _ = await served.process.waitForExit()
            served = ServedProcess(process: try await CrashHarness.launch(served.arguments), arguments: served.arguments, port: served.port, anonKey: served.anonKey)
            defer { served.process.signal(SIGTERM) }

            // A request without a body says where the upload stands: every acknowledged byte is still there.
            #expect(try await remote.uploadBlob(space: space, blob: blob, offset: offset, bytes: Data()) == offset)
            let stored = try await remote.uploadBlob(space: space, blob: blob, offset: offset, bytes: bytes[Int(offset)...])
            #expect(stored == blob.size)
            #expect(try await remote.downloadBlob(space: space, blob: blob, offset: 0, length: bytes.count) == bytes)
            // Nothing of the upload is left beside the blob.
            let folder = engine == .sqlite ? database.folder : blobFolder
            let uploads = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/uploads")) ?? []
            #expect(uploads.isEmpty, "left in uploads/: \(uploads)")
            #expect(FileManager.default.fileExists(atPath: "\(folder)/blobs/\(space.lowercasedText)/\(blob.sha256)"))
        }
    }
}
