import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Synchronization
import Testing

/// The sermon app's sermon audio, end to end: a file attached on one device, uploaded before its record, downloaded by the
/// other, on both engines; interrupted uploads resume from the bytes the server confirmed.
@Suite("Blobs, end to end")
struct BlobEndToEndTests {
    typealias Device = SyncEndToEndTests.Device

    @Test("a sermon recorded offline with notes and its audio reaches the other device with the same hash", arguments: TestEngine.available)
    func sermonAudio(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("audio")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            let recording = try Self.file(megabytes: 24)
            defer { try? FileManager.default.removeItem(at: recording) }

            // Recorded offline: the file goes into the cache and its upload is queued with the record's write.
            let audio = try phone.store.attachFile(at: recording, contentType: "audio/mp4")
            let sermon = try phone.store.save(collection: "sermons", fields: [
                "title": "Grace", "date": "2026-11-22T10:00:00Z", "audio": audio.json,
            ])
            for (index, text) in ["opening", "the point"].enumerated() {
                try phone.store.save(collection: "notes", fields: ["sermon_id": .string(sermon.id.uuidString), "text": .string(text), "timestamp": .number(Double(index * 60))])
            }
            #expect(try phone.store.blobTransfers().map(\.direction) == [.upload])

            let (pushed, pulled) = try await Self.running(phone.engine, pad.engine) { (try await phone.engine.sync(), try await pad.engine.sync()) }
            #expect(pushed.blobsUploaded == 1 && pushed.blobBytesSent == audio.size)
            #expect(pushed.pushed == 3 && pushed.rejected == 0)
            #expect(try phone.store.blobTransfers().isEmpty)

            #expect(pulled.blobsDownloaded == 1 && pulled.blobBytesReceived == audio.size)
            #expect(try pad.store.fetchAll(collection: "notes").count == 2)
            let file = try await Self.running(pad.engine) { try await pad.engine.file(collection: "sermons", id: sermon.id, field: "audio") }
            #expect(try Self.hash(file) == audio.sha256)
            #expect(try pad.store.fetch(collection: "sermons", id: sermon.id)?.fields["audio"] == audio.json)
        }
    }

    @Test("on-first-access blobs wait for the app to ask; the cache evicts what the server holds, least recently used first", arguments: TestEngine.available)
    func downloadPolicy(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("policy")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            var ids: [UUID] = []
            for index in 0..<3 {
                let recording = try Self.file(megabytes: 1, seed: UInt8(index))
                defer { try? FileManager.default.removeItem(at: recording) }
                let audio = try phone.store.attachFile(at: recording)
                ids.append(try phone.store.save(collection: "sermons", fields: ["title": .string("S\(index)"), "date": "2026-11-22T10:00:00Z", "audio": audio.json]).id)
            }
            #expect(try await Self.running(phone.engine) { try await phone.engine.sync() }.blobsUploaded == 3)

            var configuration = SyncEngine.Configuration.manualSync()
            configuration.blobDownloads = BlobDownloadPolicy(default: .onFirstAccess)
            let lazy = SyncEngine(store: pad.store, remote: SyncClient(auth: pad.auth), configuration: configuration)
            try await Self.running(lazy) {
            let report = try await lazy.sync()
            #expect(report.blobsDownloaded == 0 && report.pulled == 3)
            #expect(try pad.store.blobTransfers().filter { $0.direction == .download }.count == 3, "queued, waiting for access")
            for id in ids {
                _ = try await lazy.file(collection: "sermons", id: id, field: "audio")
            }
            #expect(try pad.store.blobCacheSize() == 3 << 20)
            _ = try await lazy.file(collection: "sermons", id: ids[0], field: "audio")  // the most recently used now
            #expect(try pad.store.evictBlobs(toFit: 1 << 20) == 2)
            let kept = try #require(try pad.store.fetch(collection: "sermons", id: ids[0])?.fields["audio"])
            #expect(try pad.store.cachedFile(for: BlobReference(json: kept)) != nil)
            #expect(try phone.store.evictBlobs(toFit: 0) == 3, "the writer may drop its copies too once the server holds them")
            _ = try await lazy.file(collection: "sermons", id: ids[1], field: "audio")  // downloads again
            }
        }
    }

    @Test("not-on-expensive-network blobs wait while the network is expensive, and a per-field override beats the collection's", arguments: TestEngine.available)
    func expensiveNetwork(_ engine: TestEngine) async throws {
        var policy = BlobDownloadPolicy(default: .eager)
        policy["sermons"] = .onFirstAccess
        policy["sermons.audio"] = .notOnExpensiveNetwork
        #expect(policy.mode(collection: "sermons", field: "audio") == .notOnExpensiveNetwork)
        #expect(policy.mode(collection: "sermons", field: "other") == .onFirstAccess)
        #expect(policy.mode(collection: "notes", field: "audio") == .eager)
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("cellular")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            let recording = try Self.file(megabytes: 1)
            defer { try? FileManager.default.removeItem(at: recording) }
            let audio = try phone.store.attachFile(at: recording)
            try phone.store.save(collection: "sermons", fields: ["title": "Roaming", "date": "2026-11-22T10:00:00Z", "audio": audio.json])
            #expect(try await Self.running(phone.engine) { try await phone.engine.sync() }.blobsUploaded == 1)

            var configuration = SyncEngine.Configuration.manualSync()
            configuration.blobDownloads = policy
            let cellular = SyncEngine(store: pad.store, remote: SyncClient(auth: pad.auth), configuration: configuration)
            await cellular.networkCostChanged(isExpensive: true)
            #expect(try await Self.running(cellular) { try await cellular.sync() }.blobsDownloaded == 0, "nothing downloads on an expensive network")
            await cellular.networkCostChanged(isExpensive: false)
            #expect(try await Self.running(cellular) { try await cellular.sync() }.blobsDownloaded == 1, "the next sync on Wi-Fi downloads it")
            #expect(try pad.store.cachedFile(for: audio) != nil)
        }
    }

    @Test("an upload cut off partway resumes from the server's offset: it sends only the bytes the server lacks", arguments: TestEngine.available)
    func interruptedUpload(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("resume")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let recording = try Self.file(megabytes: 20)
            defer { try? FileManager.default.removeItem(at: recording) }
            let audio = try phone.store.attachFile(at: recording)
            try phone.store.save(collection: "sermons", fields: ["title": "Cut", "date": "2026-11-22T10:00:00Z", "audio": audio.json])

            let flaky = CountingRemote(base: SyncClient(auth: phone.auth), failAfterChunks: 2)
            var configuration = SyncEngine.Configuration.manualSync()
            configuration.blobChunkSize = 2 << 20  // not the default: the engine's first chunk is the configuration's
            let failing = SyncEngine(store: phone.store, remote: flaky, configuration: configuration)
            await #expect(throws: (any Error).self) { try await Self.running(failing) { try await failing.sync() } }
            #expect(try phone.store.pendingCount() == 1, "the record waits for its file")
            let confirmed = try #require(try phone.store.blobTransfers().first?.confirmed)
            #expect(confirmed == flaky.delivered && confirmed > 0, "confirmed is what the server acknowledged")
            // The first chunk is the configured one; the next grows with the measured rate, at most fourfold.
            #expect(flaky.chunkSizes.first == configuration.blobChunkSize)
            #expect(flaky.chunkSizes.dropFirst().allSatisfy { (configuration.blobChunkSize...4 * configuration.blobChunkSize).contains($0) })

            let resumed = CountingRemote(base: SyncClient(auth: phone.auth), failAfterChunks: nil)
            let second = SyncEngine(store: phone.store, remote: resumed, configuration: configuration)
            let report = try await Self.running(second) { try await second.sync() }
            #expect(report.blobsUploaded == 1 && report.pushed == 1 && report.rejected == 0)
            #expect(resumed.bytes == audio.size - confirmed, "the resumed upload sent \(resumed.bytes) bytes, not the \(audio.size - confirmed) left")
        }
    }

    @Test("a download whose ranges come back shorter than asked goes on from where each ended", arguments: TestEngine.available)
    func shortRanges(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("ranges")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            let recording = try Self.file(megabytes: 5)
            defer { try? FileManager.default.removeItem(at: recording) }
            let audio = try phone.store.attachFile(at: recording)
            try phone.store.save(collection: "sermons", fields: ["title": "Short", "date": "2026-11-22T10:00:00Z", "audio": audio.json])
            _ = try await Self.running(phone.engine) { try await phone.engine.sync() }

            let short = ShortRangeRemote(base: SyncClient(auth: pad.auth), most: 700_000)
            var configuration = SyncEngine.Configuration.manualSync()
            configuration.blobChunkSize = 1 << 20
            let reader = SyncEngine(store: pad.store, remote: short, configuration: configuration)
            let report = try await Self.running(reader) { try await reader.sync() }
            #expect(report.blobsDownloaded == 1 && report.blobBytesReceived == audio.size)
            let file = try #require(try pad.store.cachedFile(for: audio))
            #expect(try Self.hash(file) == audio.sha256)
            let used = short.replies.sorted { $0.offset < $1.offset }
            #expect(used.first?.offset == 0 && zip(used, used.dropFirst()).allSatisfy { $0.offset + Int64($0.count) == $1.offset }, "\(used)")
        }
    }

    @Test("a sync suspended while the next range is on its way cancels that request, keeps the confirmed bytes, and resumes from them")
    func suspendedDuringReadAhead() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("ahead")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            let recording = try Self.file(megabytes: 3)
            defer { try? FileManager.default.removeItem(at: recording) }
            let audio = try phone.store.attachFile(at: recording)
            try phone.store.save(collection: "sermons", fields: ["title": "Ahead", "date": "2026-11-22T10:00:00Z", "audio": audio.json])
            _ = try await Self.running(phone.engine) { try await phone.engine.sync() }

            let hanging = HangingRangeRemote(base: SyncClient(auth: pad.auth))
            var configuration = SyncEngine.Configuration.manualSync()
            configuration.blobChunkSize = 1 << 20
            configuration.blobChunkSizeLimit = 1 << 20
            let reader = SyncEngine(store: pad.store, remote: hanging, configuration: configuration)
            let report = try await Self.running(reader) {
                async let synced = reader.sync()
                await hanging.waitUntilHanging()
                // Long enough for the first range to be written and confirmed, so the sync is waiting on the hung one
                // (on a slower machine it may still be writing: then the range is cancelled as the loop leaves).
                try await Task.sleep(for: .milliseconds(300))
                await reader.suspend()
                // Without the runner cancelling it, the range asked ahead would sleep its minute out.
                let deadline = ContinuousClock.now + .seconds(10)
                while !hanging.wasCancelled, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                #expect(hanging.wasCancelled, "the range asked ahead was not cancelled")
                #expect(try pad.store.blobTransfers().first?.confirmed == 1 << 20, "the first range stays confirmed")
                await reader.resume()
                return try await synced
            }
            #expect(report.blobsDownloaded == 1)
            #expect(try Self.hash(try #require(try pad.store.cachedFile(for: audio))) == audio.sha256)
            #expect(hanging.offsetsAfterResume.first == 1 << 20, "the download went on from the confirmed bytes")
        }
    }

    @Test("a session that ends mid-upload stops the transfers without marking them failed or delaying them")
    func sessionEndsMidUpload() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let phone = try await Device.signIn(server, email: uniqueEmail("ended"), password: "correct horse 1", signUp: true)
            let recording = try Self.file(megabytes: 10)
            defer { try? FileManager.default.removeItem(at: recording) }
            let audio = try phone.store.attachFile(at: recording)
            try phone.store.save(collection: "sermons", fields: ["title": "Ended", "date": "2026-11-22T10:00:00Z", "audio": audio.json])
            let ended = AuthError(code: .sessionNotFound, message: "Session from session_id claim in JWT does not exist", status: 403)
            let remote = CountingRemote(base: SyncClient(auth: phone.auth), failAfterChunks: 1, failure: ended)
            let engine = SyncEngine(store: phone.store, remote: remote, configuration: .manualSync())
            await #expect(throws: (any Error).self) { try await Self.running(engine) { try await engine.sync() } }
            let transfer = try #require(try phone.store.blobTransfers().first)
            #expect(!transfer.failed && transfer.lastError == nil && transfer.retryAt == nil, "\(transfer)")
        }
    }

    /// Runs `engines` (a sync needs its engine running) around `body`.
    static func running<Result>(_ engines: SyncEngine..., body: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for engine in engines { group.addTask { try await engine.run() } }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    static func file(megabytes: Int, seed: UInt8 = 0) throws -> URL {
        try TestFiles.temporary(megabytes: megabytes, seed: UInt64(seed) + 1)
    }

    static func hash(_ url: URL) throws -> String { try TestFiles.sha256(url) }
}

/// The real client, counting the blob bytes it sends, and failing like a dropped network after `failAfterChunks`.
final class CountingRemote: ForwardingSyncRemote, BlobRemote, Sendable {
    let base: SyncClient
    let failAfterChunks: Int?
    private let sent = Mutex<(bytes: Int64, chunks: Int)>((0, 0))
    private let accepted = Mutex<(bytes: Int64, sizes: [Int])>((0, []))

    /// What the cut-off upload throws: a dropped network unless told otherwise.
    let failure: any Error

    init(base: SyncClient, failAfterChunks: Int?, failure: any Error = RemoteError(code: .networkUnavailable, message: "The network went away.")) {
        self.base = base
        self.failAfterChunks = failAfterChunks
        self.failure = failure
    }

    var bytes: Int64 { sent.withLock { $0.bytes } }
    /// The bytes of the chunks the server answered.
    var delivered: Int64 { accepted.withLock { $0.bytes } }
    /// The size of each chunk sent, in order (empty requests aside).
    var chunkSizes: [Int] { accepted.withLock { $0.sizes } }

    func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64 {
        let chunks = sent.withLock { state -> Int in
            if !bytes.isEmpty { state.chunks += 1 }
            return state.chunks
        }
        if let failAfterChunks, chunks > failAfterChunks { throw failure }
        sent.withLock { $0.bytes += Int64(bytes.count) }  // what went out; the cut-off request never left
        let reached = try await base.uploadBlob(space: space, blob: blob, offset: offset, bytes: bytes)
        if !bytes.isEmpty { accepted.withLock { $0 = ($0.bytes + Int64(bytes.count), $0.sizes + [bytes.count]) } }
        return reached
    }

    func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data {
        try await base.downloadBlob(space: space, blob: blob, offset: offset, length: length)
    }
}

/// Answers each blob range with at most `most` bytes, as a server may, and records the ranges it answered.
final class ShortRangeRemote: ForwardingSyncRemote, BlobRemote, Sendable {
    let base: SyncClient
    let most: Int
    private let answered = Mutex<[(offset: Int64, count: Int)]>([])

    init(base: SyncClient, most: Int) {
        self.base = base
        self.most = most
    }

    /// The ranges answered.
    var replies: [(offset: Int64, count: Int)] { answered.withLock { $0 } }

    func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64 {
        try await base.uploadBlob(space: space, blob: blob, offset: offset, bytes: bytes)
    }

    func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data {
        let data = try await base.downloadBlob(space: space, blob: blob, offset: offset, length: min(length, most))
        answered.withLock { $0.append((offset, data.count)) }
        return data
    }
}

/// Hangs the first blob range past offset 0 until its request is cancelled (it would sleep a minute), then forwards.
final class HangingRangeRemote: ForwardingSyncRemote, BlobRemote, Sendable {
    let base: SyncClient
    private let state = Mutex<(hung: Bool, cancelled: Bool, after: [Int64])>((false, false, []))
    private let hangingStarted: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init(base: SyncClient) {
        self.base = base
        (hangingStarted, signal) = AsyncStream.makeStream()
    }

    var wasCancelled: Bool { state.withLock { $0.cancelled } }
    /// The offsets asked for once the hung request was cancelled.
    var offsetsAfterResume: [Int64] { state.withLock { $0.after } }

    func waitUntilHanging() async {
        for await _ in hangingStarted { return }
    }

    func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64 {
        try await base.uploadBlob(space: space, blob: blob, offset: offset, bytes: bytes)
    }

    func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data {
        let hangs = state.withLock { state -> Bool in
            if state.cancelled { state.after.append(offset) }
            guard offset > 0, !state.hung else { return false }
            state.hung = true
            return true
        }
        if hangs {
            signal.yield()
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                state.withLock { $0.cancelled = true }
                throw error
            }
        }
        return try await base.downloadBlob(space: space, blob: blob, offset: offset, length: length)
    }
}
