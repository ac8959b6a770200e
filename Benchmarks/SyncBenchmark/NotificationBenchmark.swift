import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation

/// `ferry-benchmark --notifications [--devices N] [--writes K] [--postgres URL] [--json]`: does waking devices slow
/// commits? One device pushes K notes one sync at a time while N other devices of the account wait for background
/// notifications, against four servers in turn: notifications off, APNs answering at once (the APNs stand-in), APNs
/// answering after 10 s, and APNs down (503); then APNs answering at once with every commit waking every device (the
/// least interval between two notifications to a device cut from 15 minutes to 1 ms), which prices each notification.
/// Each push's wall time, and this process's CPU time (client, server and stand-in), are compared with the first
/// server's.
enum NotificationBenchmark {
    struct Run {
        var name: String
        var p50: Double
        var p99: Double
        var cpu: Double
        var notifications: Int
    }

    static func run(_ options: BenchmarkOptions, engine: TestEngine) async throws -> (table: String, json: String) {
        let devices = min(options.devices, 200), writes = options.writes
        let apns = try await APNsStandIn.start()
        defer { Task { await apns.shutdown() } }
        var runs: [Run] = []
        let cases: [(String, APNsStandIn.Mode?, Duration?)] = [
            ("notifications off", nil, nil),
            ("APNs answers at once", .normal, nil),
            ("APNs answers after 10 s", .slow(.seconds(10)), nil),
            ("APNs down (503)", .unavailable, nil),
            ("APNs answers at once, every commit wakes every device (interval 1 ms)", .normal, .milliseconds(1)),
        ]
        for (name, mode, interval) in cases {
            progress("notifications: \(name)")
            if let mode { apns.setMode(mode) }
            let before = apns.received().count
            var run = try await measure(engine: engine, apns: mode == nil ? nil : apns, interval: interval, devices: devices, writes: writes)
            run.name = name
            run.notifications = apns.received().count - before
            runs.append(run)
        }
        let base = runs[0]
        var table = """

            | Pushes while \(devices) devices wait for notifications (\(writes) one-note syncs, server on \(engine)) | p50 | p99 | × p50 off | CPU s | APNs requests |
            |---|---:|---:|---:|---:|---:|
            """
        for run in runs {
            table += "\n| \(run.name) | \(ms(run.p50)) | \(ms(run.p99)) | \(String(format: "%.2f", run.p50 / base.p50)) | \(String(format: "%.2f", run.cpu)) | \(run.notifications) |"
        }
        let json: [String: Any] = [
            "engine": "\(engine)", "devices": devices, "writes": writes,
            "runs": runs.map { ["name": $0.name, "p50_ms": $0.p50 * 1000, "p99_ms": $0.p99 * 1000, "ratio_p50": $0.p50 / base.p50, "cpu_seconds": $0.cpu, "apns_requests": $0.notifications] },
        ]
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        return (table, String(decoding: data, as: UTF8.self))
    }

    /// One server: `devices` devices with push tokens, then `writes` pushes of one note each by another device.
    /// `interval` replaces the least time between two notifications to one device (15 minutes by default).
    private static func measure(engine: TestEngine, apns: APNsStandIn?, interval: Duration?, devices: Int, writes: Int) async throws -> Run {
        try await LiveServer.with(engine, schema: SyncBenchmark.schema, configure: { configuration in
            configuration.useFastPasswordHashing()
            apns?.configure(&configuration)
            configuration.notifications.coalescingDelay = .zero
            if let interval { configuration.notifications.minimumInterval = interval }
        }) { server in
            let endpoint = BenchmarkDevice.Endpoint(baseURL: server.baseURL, anonKey: server.server.keys.anonKey)
            let email = "woken-\(UUID().uuidString.prefix(8).lowercased())@example.com", password = "correct horse battery"
            let writer = try await BenchmarkDevice.signIn(endpoint, email: email, password: password, signUp: true, fileURL: nil)
            for _ in 0..<devices {
                let auth = AuthClient(endpoint: ServerEndpoint(baseURL: endpoint.baseURL, apiKey: endpoint.anonKey), store: InMemorySessionStore(), logger: .testing)
                _ = try await auth.signIn(email: email, password: password)
                let client = SyncClient(auth: auth), keys = DeviceKeyPair.generate(), id = UUID()
                _ = try await client.registerDevice(id, DeviceRegistration(name: "Sleeping phone", type: .iosPhone, hostname: "phone.local", publicKey: keys.publicKeyBase64), keys: keys)
                _ = try await client.registerPushToken(Data((0..<32).map { _ in UInt8.random(in: 0...255) }), environment: .production, device: id)
            }
            let cpu = ProcessMetrics.cpuSeconds()
            var seconds: [Double] = []
            try await writer.running {
                for index in 0..<writes {
                    try writer.store.save(collection: "notes", fields: noteFields(index))
                    let start = ProcessMetrics.monotonicNanoseconds()
                    _ = try await writer.engine.sync()
                    seconds.append(Double(ProcessMetrics.monotonicNanoseconds() - start) / 1e9)
                }
            }
            seconds.sort()
            return Run(name: "", p50: seconds[seconds.count / 2], p99: seconds[min(seconds.count - 1, seconds.count * 99 / 100)], cpu: ProcessMetrics.cpuSeconds() - cpu, notifications: 0)
        }
    }

    private static func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
}
