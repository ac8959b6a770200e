import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Synchronization

/// `ferry-benchmark --realtime [--devices N] [--writes K] [--carried-change-bytes B] [--postgres URL [--instances 2]] [--json]`:
/// N devices listen on loopback (in a child process, ``RealtimeDevicesRun``), one device in this process writes K notes
/// one after another, and the benchmark reports how many devices applied each and how long after its push was
/// acknowledged; and the server's memory per open stream (this process's resident memory before and after the streams
/// opened, divided by N). With `--instances`, more servers on the same PostgreSQL database run in this process; the
/// writer uses the first and device `i` the instance `i mod instances`, as a load balancer would spread them.
enum RealtimeBenchmark {
    struct Results {
        var engine: String
        var instances = 1
        var devices: Int
        var writes: Int
        var delivered: Int
        var latenciesMilliseconds: [Double]
        var serverKiBPerConnection: Double
        var serverTrimmedKiBPerConnection: Double
        var connectSeconds: Double
        /// CPU time of this process (the server and the writer) per write, while the writes were delivered.
        var serverCPUMillisecondsPerWrite: Double
        /// Whether the devices were bare streams (`--listeners`) rather than engines with stores.
        var isListeners = false
        /// With `--restart`: from the first stream closed by the restart until every stream was open again.
        var reconnectSeconds: Double?

        func percentile(_ fraction: Double) -> Double { Self.percentile(fraction, of: latenciesMilliseconds.sorted()) }

        /// The nearest-rank percentile of `sorted` (ascending); NaN when it is empty.
        static func percentile(_ fraction: Double, of sorted: [Double]) -> Double {
            guard !sorted.isEmpty else { return .nan }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
        }

        var table: String {
            func number(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
            return """

                | Realtime (\(devices) \(isListeners ? "bare streams" : "devices"), \(writes) writes, \(instances == 1 ? "server" : "\(instances) instances") on \(engine)) | Result |
                |---|---:|
                | devices that applied every write | \(delivered) of \(devices) |
                | propagation, push acknowledged → applied on the device, p50 | \(number(percentile(0.5))) ms |
                | propagation p99 | \(number(percentile(0.99))) ms |
                | propagation max | \(number(latenciesMilliseconds.max() ?? .nan)) ms |
                | server memory per open stream (resident) | \(number(serverKiBPerConnection)) KiB |
                | server memory per open stream (resident once freed pages are returned) | \(number(serverTrimmedKiBPerConnection)) KiB |
                | time for every device to connect and finish its first sync | \(number(connectSeconds, 2)) s |
                | CPU of the server (and the writer) per write delivered to every device | \(number(serverCPUMillisecondsPerWrite)) ms |
                """ + (reconnectSeconds.map { "\n| every stream open again after a restart (from the first close) | \(number($0, 2)) s |" } ?? "")
        }

        var json: String {
            func finite(_ value: Double) -> Any { value.isFinite ? (value * 1000).rounded() / 1000 : NSNull() }
            let object: [String: Any] = [
                "engine": engine, "instances": instances, "devices": devices, "writes": writes, "delivered": delivered,
                "propagation_p50_ms": finite(percentile(0.5)), "propagation_p99_ms": finite(percentile(0.99)),
                "propagation_max_ms": finite(latenciesMilliseconds.max() ?? .nan),
                "server_kib_per_connection": finite(serverKiBPerConnection), "connect_seconds": finite(connectSeconds),
                "server_trimmed_kib_per_connection": finite(serverTrimmedKiBPerConnection),
                "server_cpu_ms_per_write": finite(serverCPUMillisecondsPerWrite), "listeners": isListeners,
                "reconnect_seconds": reconnectSeconds.map(finite) ?? NSNull(),
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }

    static func run(_ options: BenchmarkOptions, engine: TestEngine) async throws -> Results {
        let devices = options.devices
        return try await LiveServer.with(engine, schema: SyncBenchmark.schema, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.realtime.maximumStreamsPerAccount = devices + 10
            configuration.realtime.maximumStreams = max(configuration.realtime.maximumStreams, devices + 10)
            if let bytes = options.carriedChangeBytes { configuration.realtime.carriedChangeBytes = bytes }
        }) { server in
            // The other instances share the first's configuration (database, secret), each on a port of its own.
            var others: [LiveServer] = []
            do {
                for _ in 1..<max(1, options.instances) { others.append(try await LiveServer.start(server.configuration)) }
                let results = try await run(options, engine: engine, servers: [server] + others)
                for other in others { await other.stop() }
                return results
            } catch {
                for other in others { await other.stop() }
                throw error
            }
        }
    }

    /// The run itself: the writer on `servers[0]`, device `i` on `servers[i % servers.count]`.
    private static func run(_ options: BenchmarkOptions, engine: TestEngine, servers: [LiveServer]) async throws -> Results {
        let devices = options.devices, writes = options.writes
        let server = servers[0]
        let endpoint = BenchmarkDevice.Endpoint(baseURL: server.baseURL, anonKey: server.server.keys.anonKey)
        let email = "realtime-\(UUID().uuidString.prefix(8).lowercased())@example.com", password = "correct horse battery"
        let timed = AcknowledgementClock()
        let writer = try await BenchmarkDevice.signIn(endpoint, email: email, password: password, signUp: true, fileURL: nil) { client in
            PushTimingRemote(base: client, acknowledgedAt: timed)
        }
        // Engines write one note first, untimed: each store's first apply compiles its statements, a thousand of them
        // on these two cores at once (a phone compiles its own once, in a fraction of a millisecond).
        let warmups = options.isListeners ? 0 : 1
        let ids = (0..<warmups + writes).map { _ in UUID() }
        let memoryBefore = ProcessMetrics.residentMiB(), heapBefore = ProcessMetrics.trimmedResidentMiB()

        var environment = ProcessInfo.processInfo.environment
        environment[DeviceOnlyRun.passwordVariable] = password
        let executable = Bundle.main.executableURL?.path(percentEncoded: false) ?? CommandLine.arguments[0]
        let arguments = [
            options.isListeners ? RealtimeListenersRun.flag : RealtimeDevicesRun.flag, "--server", servers.map(\.baseURL.absoluteString).joined(separator: ","),
            "--anon-key", endpoint.anonKey, "--email", email, "--devices", String(devices), "--writes", String(writes),
            "--ids", ids.map(\.uuidString).joined(separator: ","), "--restart", options.restarts ? "1" : "0",
        ]
        let child = try ChildProcess(executable, arguments: arguments, environment: environment, standardError: .inherit)
        defer {
            if child.isRunning { child.terminate() }
            child.waitUntilExit()
        }
        let lines = LineReader(child.standardOutput!)
        progress("connecting \(devices) devices")
        let connectStart = ContinuousClock.now
        guard await lines.next() == "connected" else { throw BenchmarkError("the devices' process ended before they connected") }
        let connectSeconds = (ContinuousClock.now - connectStart).seconds
        let memoryAfter = ProcessMetrics.residentMiB(), heapAfter = ProcessMetrics.trimmedResidentMiB()
        progress("\(devices) devices connected in \(String(format: "%.1f", connectSeconds)) s; writing \(writes) notes")

        var acknowledged: [UInt64] = []
        var cpuBefore = ProcessMetrics.cpuSeconds()
        try await writer.running {
            for (index, id) in ids.enumerated() {
                if index == warmups { cpuBefore = ProcessMetrics.cpuSeconds() }
                try writer.store.save(collection: "notes", id: id, fields: noteFields(index))
                let report = try await writer.engine.sync()
                guard report.pushed == 1 else { throw BenchmarkError("the write was not pushed") }
                acknowledged.append(timed.last.withLock { $0 })
                guard await lines.next() == "delivered \(index)" else { throw BenchmarkError("the devices' process stopped") }
            }
        }
        let serverCPU = ProcessMetrics.cpuSeconds() - cpuBefore
        guard let arrivals = await lines.next() else { throw BenchmarkError("the devices' process ended before its report") }
        let applied = try JSONDecoder().decode([[UInt64]].self, from: Data(arrivals.utf8))
        var reconnectSeconds: Double?
        if options.restarts {
            progress("restarting the server")
            let restarted = try await server.restarted()
            guard let line = await lines.next(), line.hasPrefix("reconnected ") else { throw BenchmarkError("the streams did not report reconnecting") }
            reconnectSeconds = Double(line.dropFirst("reconnected ".count))
            await restarted.stop()
        }
        while await lines.next() != nil {}
        var latencies: [Double] = []
        for (write, times) in applied.enumerated().dropFirst(warmups) {
            let own = times.filter { $0 > 0 }.map { Double(Int64($0) - Int64(acknowledged[write])) / 1e6 }.sorted()
            // Each write's own tail: the first can differ from the rest (every store compiles its statements then).
            if let last = own.last {
                progress(String(format: "write %d: p50 %.1f ms, p99 %.1f ms, max %.1f ms", write, Results.percentile(0.5, of: own), Results.percentile(0.99, of: own), last))
            }
            latencies += own
        }
        let delivered = (0..<devices).filter { device in applied.dropFirst(warmups).allSatisfy { $0[device] > 0 } }.count
        return Results(
            engine: engine.rawValue, instances: servers.count, devices: devices, writes: writes, delivered: delivered, latenciesMilliseconds: latencies,
            serverKiBPerConnection: max(0, memoryAfter - memoryBefore) * 1024 / Double(devices),
            serverTrimmedKiBPerConnection: max(0, heapAfter - heapBefore) * 1024 / Double(devices), connectSeconds: connectSeconds,
            serverCPUMillisecondsPerWrite: serverCPU * 1000 / Double(writes), isListeners: options.isListeners,
            reconnectSeconds: reconnectSeconds
        )
    }
}

/// When the writer's last push was acknowledged (``ProcessMetrics/monotonicNanoseconds()``).
final class AcknowledgementClock: Sendable {
    let last = Mutex<UInt64>(0)
}

/// The writer's remote: notes the time at which each push's reply arrived.
struct PushTimingRemote: SyncRemote {
    let base: SyncClient
    let acknowledgedAt: AcknowledgementClock

    func push(_ request: PushRequest) async throws -> PushResponse {
        let response = try await base.push(request)
        acknowledgedAt.last.withLock { $0 = ProcessMetrics.monotonicNanoseconds() }
        return response
    }

    func pull(_ request: PullRequest) async throws -> PullResponse { try await base.pull(request) }
    func schema() async throws -> Schema { try await base.schema() }
    func createSpace(_ request: CreateSpaceRequest) async throws -> SpaceSummary { try await base.createSpace(request) }
}
