import FerryClient
import FerryCore
import FerrySecurity
import FerryTesting
import Foundation

/// One device of the benchmark: its session, store and engine.
struct BenchmarkDevice {
    let store: LocalStore
    let engine: SyncEngine

    /// Where devices sign in: the server's address and its anon key.
    struct Endpoint: Sendable {
        var baseURL: URL
        var anonKey: String
    }

    /// Signs in (or up) on `endpoint`, opens a store (on disk at `fileURL`, else in memory) and registers the
    /// device, since the server takes a push only from a session bound to the pushing device.
    static func signIn(
        _ endpoint: Endpoint, email: String, password: String, signUp: Bool, fileURL: URL?,
        remote: (SyncClient) -> any SyncRemote = { $0 }, blobChunkSize: Int? = nil
    ) async throws -> BenchmarkDevice {
        let auth = AuthClient(endpoint: ServerEndpoint(baseURL: endpoint.baseURL, apiKey: endpoint.anonKey), store: InMemorySessionStore(), logger: .testing)
        let session = signUp ? try await auth.signUp(email: email, password: password) : try await auth.signIn(email: email, password: password)
        let client = SyncClient(auth: auth)
        let schema = try await client.schema()
        let store = try fileURL.map { try LocalStore(fileURL: $0, schema: schema, defaultSpace: session.user.id, logger: .testing) }
            ?? LocalStore.inMemory(schema: schema, defaultSpace: session.user.id, logger: .testing)
        let keys = DeviceKeyPair.generate()
        _ = try await client.registerDevice(
            store.deviceId, DeviceRegistration(name: "Benchmark device", type: .linux, hostname: "bench.local", publicKey: keys.publicKeyBase64), keys: keys
        )
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        configuration.localChangeDebounce = .seconds(86_400)
        configuration.realtime = false
        if let blobChunkSize { configuration.blobChunkSize = blobChunkSize }
        // FERRY_BENCH_PUSH_BATCH compares push batch sizes (docs/benchmarks.md); the SDK's default otherwise.
        if let size = ProcessInfo.processInfo.environment["FERRY_BENCH_PUSH_BATCH"].flatMap(Int.init), (1...1000).contains(size) {
            configuration.pushBatchSize = size
        }
        return BenchmarkDevice(store: store, engine: SyncEngine(store: store, remote: remote(client), configuration: configuration, logger: .testing))
    }

    /// Syncs, retrying a failed sync (say, a request timeout on a loaded machine) up to `attempts` times.
    /// Work a failed attempt committed is kept: the retry's push is acknowledged as duplicates.
    func syncRetrying(attempts: Int = 3) async throws -> (SyncReport, retries: Int) {
        var retries = 0
        while true {
            do {
                return (try await engine.sync(), retries)
            } catch where retries + 1 < attempts {
                retries += 1
                progress("sync failed (\(error)); retrying")
            }
        }
    }

    /// Runs `body` while the engine runs (``SyncEngine/sync()`` needs `run()`), then stops the engine.
    func running<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await Self.running([self], body)
    }

    /// Runs `body` while the engines of `devices` run, then stops them.
    static func running<Result>(_ devices: [BenchmarkDevice], _ body: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask { try await device.engine.run() }
            }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}

/// The wire fields of the benchmark's note `index`: deterministic, varied, a realistic size (~150 bytes).
func noteFields(_ index: Int) -> [String: JSONValue] {
    [
        "title": .string("Note \(index)"),
        "body": .string("Body of note \(index): " + String(repeating: "lorem ipsum ", count: 8 + index % 5)),
        "rank": .number(Double(index % 1000)),
        "score": .number(Double(index % 400) / 4),
        "done": .bool(index % 3 == 0),
    ]
}
