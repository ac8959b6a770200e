import FerryClient
import FerryCore
import FerryTesting
import Foundation
import GRDB
import Synchronization

/// The hidden `--realtime-devices` mode of `ferry-benchmark --realtime`: this process holds the listening devices,
/// so the parent's memory is the server's alone.
///
/// It signs in once and runs `--devices` engines on that session (in-memory stores, realtime on, nothing periodic;
/// engine `i` on the `i mod n`-th of the n comma-separated instances of `--server`),
/// prints `connected` once every stream is open and every engine idle, then `delivered K` each time every device
/// has applied the K-th record of `--ids` (or 30 s passed), and last one JSON object: for each id, the monotonic time
/// (``ProcessMetrics/monotonicNanoseconds()``) at which each device had it, 0 for never.
enum RealtimeDevicesRun {
    static let flag = "--realtime-devices"

    static func main(_ arguments: [String]) async throws {
        var values: [String: String] = [:]
        var iterator = arguments.makeIterator()
        while let name = iterator.next(), let value = iterator.next() { values[name] = value }
        let servers = values["--server"]?.split(separator: ",").compactMap { URL(string: String($0)) } ?? []
        guard let server = servers.first, let anonKey = values["--anon-key"], let email = values["--email"],
              let count = values["--devices"].flatMap(Int.init), let ids = values["--ids"]?.split(separator: ",").compactMap({ UUID(uuidString: String($0)) }),
              let password = ProcessInfo.processInfo.environment[DeviceOnlyRun.passwordVariable]
        else { throw BenchmarkError("\(flag) needs --server, --anon-key, --email, --devices, --ids and the password in \(DeviceOnlyRun.passwordVariable)") }

        let endpoint = ServerEndpoint(baseURL: server, apiKey: anonKey)
        let transport = DefaultHTTPTransport(timeout: .seconds(60))
        let first = AuthClient(endpoint: endpoint, store: InMemorySessionStore(), transport: transport, logger: .testing)
        let session = try await first.signIn(email: email, password: password)
        let schema = try await SyncClient(auth: first).schema()
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        configuration.localChangeDebounce = .seconds(86_400)
        // A phone holds one store. Here a thousand share the process, and each store's serial queue of its own ran on a
        // thread of its own (272 in a profile of the writes): the kernel switching between them took more of the two
        // cores than the stores' transactions. Their queues share the global queue's threads, one per core, instead.
        var storeConfiguration = GRDB.Configuration()
        storeConfiguration.targetQueue = DispatchQueue.global(qos: .userInitiated)
        let devices = try (0..<count).map { index in
            let own = ServerEndpoint(baseURL: servers[index % servers.count], apiKey: anonKey)
            let auth = AuthClient(endpoint: own, store: InMemorySessionStore(session), transport: transport, logger: .testing)
            let store = try LocalStore(writer: DatabaseQueue(configuration: storeConfiguration), schema: schema, defaultSpace: session.user.id, logger: .testing)
            return SyncEngine(store: store, remote: SyncClient(auth: auth), configuration: configuration, logger: .testing)
        }
        let seen = ArrivalTimes(ids: ids.count, devices: count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, engine) in devices.enumerated() {
                group.addTask { try await engine.run() }
                group.addTask { await watch(engine, index: index, ids: ids, seen: seen) }
                if index % 50 == 49 { try await Task.sleep(for: .milliseconds(20)) }  // a ramp, not a thundering herd
            }
            let deadline = ContinuousClock.now + .seconds(300)
            while !devices.allSatisfy({ $0.status.realtime == .connected && !$0.status.isSynchronizing && $0.status.lastSyncedAt != nil }) {
                guard ContinuousClock.now < deadline else { throw BenchmarkError("not every device connected within 300 s") }
                try await Task.sleep(for: .milliseconds(100))
            }
            DeviceOnlyRun.emit("connected")
            for index in ids.indices {
                let giveUp = ContinuousClock.now + .seconds(30)
                while seen.times.withLock({ $0[index].contains(0) }), ContinuousClock.now < giveUp {
                    try await Task.sleep(for: .milliseconds(5))
                }
                DeviceOnlyRun.emit("delivered \(index)")
            }
            DeviceOnlyRun.emit(String(decoding: try JSONEncoder().encode(seen.times.withLock { $0 }), as: UTF8.self))
            group.cancelAll()
        }
    }

    /// Records when each id first appears in the device's store, checked after each sync it finishes and each time it
    /// applies changes a poke carried.
    private static func watch(_ engine: SyncEngine, index: Int, ids: [UUID], seen: ArrivalTimes) async {
        var last: (synced: Date?, streamed: Date?)
        var next = 0
        for await status in engine.statusUpdates() where status.lastSyncedAt != last.synced || status.lastStreamedAt != last.streamed {
            last = (status.lastSyncedAt, status.lastStreamedAt)
            let now = ProcessMetrics.monotonicNanoseconds()
            // The writer writes each note once every device has the one before: only the first note this device lacks
            // can have arrived (looking up every later one after each update was most of this process's work).
            while next < ids.count, (try? engine.store.fetch(collection: "notes", id: ids[next])) != nil {
                seen.times.withLock { $0[next][index] = now }
                next += 1
            }
        }
    }
}

/// When each device first had each id (0: not yet).
final class ArrivalTimes: Sendable {
    let times: Mutex<[[UInt64]]>

    init(ids: Int, devices: Int) {
        times = Mutex([[UInt64]](repeating: [UInt64](repeating: 0, count: devices), count: ids))
    }
}
