import FerryClient
import FerryServer
import FerryTesting
import Foundation
import GRDB

/// `ferry-benchmark`: Ferry against raw SQLite doing the same work — initial sync, push and local writes — plus
/// no-op sync latency, the client's peak memory and how a small pull scales with the device's store
/// (issue 12; what each measure is and the results are in docs/benchmarks.md).
///
/// ```
/// swift build -c release --product ferry-benchmark
/// .build/release/ferry-benchmark --rows 100000 [--postgres postgres://user@host:port/db] [--json]
/// ```
@main
struct SyncBenchmark {
    /// The benchmark's one collection: a note with fields of each common type.
    static let schema = """
        version: 1
        collections:
          notes:
            fields:
              title: { type: text, required: true }
              body: text
              rank: integer
              score: real
              done: bool
        """

    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == DeviceOnlyRun.flag {
            return try await DeviceOnlyRun.main(Array(arguments.dropFirst()))
        }
        if arguments.first == RealtimeDevicesRun.flag {
            return try await RealtimeDevicesRun.main(Array(arguments.dropFirst()))
        }
        if arguments.first == RealtimeListenersRun.flag {
            return try await RealtimeListenersRun.main(Array(arguments.dropFirst()))
        }
        let options = BenchmarkOptions.parse(arguments)
        let engine: TestEngine
        if let url = options.postgresURL {
            setenv(TestEngine.postgresURLVariable, url, 1)
            engine = .postgres
        } else {
            engine = .sqlite
        }
        // The benchmarks of one area each, beside the sync one: the first asked for runs alone.
        typealias Benchmark = (BenchmarkOptions, TestEngine) async throws -> (table: String, json: String)
        let areas: [(isAsked: Bool, title: String, run: Benchmark)] = [
            (options.isBlobs, "--blobs: \(options.megabytes) MiB", BlobBenchmark.run),
            (options.isRest, "--rest: \(options.rows) sermons", RestBenchmark.run),
            (options.isNotifications, "--notifications: \(options.devices) devices", NotificationBenchmark.run),
            (options.isRealtime, "--realtime: \(options.devices) devices", { options, engine in
                let results = try await RealtimeBenchmark.run(options, engine: engine)
                return (results.table, results.json)
            }),
        ]
        if let area = areas.first(where: \.isAsked) {
            progress("ferry-benchmark \(area.title), server on \(engine)")
            let results = try await area.run(options, engine)
            print(results.table)
            if options.isJSON { print(results.json) }
            return
        }
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-benchmark-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        progress("ferry-benchmark: \(options.rows) rows, server on \(engine)")
        let results = try await measure(options, engine: engine, folder: folder)
        print(results.table)
        if options.isJSON { print(results.json) }
    }

    /// Starts the server, runs every measure, stops the server.
    nonisolated static func measure(_ options: BenchmarkOptions, engine: TestEngine, folder: URL) async throws -> BenchmarkResults {
        try await LiveServer.with(engine, schema: schema, configure: { $0.useFastPasswordHashing() }) { server in
            try await run(options, engine: engine, endpoint: .init(baseURL: server.baseURL, anonKey: server.server.keys.anonKey), folder: folder)
        }
    }

    static func run(_ options: BenchmarkOptions, engine: TestEngine, endpoint: BenchmarkDevice.Endpoint, folder: URL) async throws -> BenchmarkResults {
        var results = BenchmarkResults(rows: options.rows, engine: engine.rawValue)
        let email = "bench-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "correct horse battery"
        let clock = ContinuousClock()

        // (f) One device writes N rows locally, one `put` (one transaction) each, into an on-disk store;
        // (g) GRDB inserts the same rows the same way into an empty copy of the table.
        let seeder = try await BenchmarkDevice.signIn(endpoint, email: email, password: password, signUp: true, fileURL: folder.appending(path: "seeder.sqlite"))
        results.localWriteSeconds = try clock.measure {
            for index in 0..<options.rows {
                try seeder.store.save(collection: "notes", fields: noteFields(index))
                if (index + 1) % 10_000 == 0 { progress("  \(index + 1) local writes") }
            }
        }.seconds
        progress("wrote \(options.rows) rows locally in \(results.localWriteSeconds) s; GRDB inserting them one transaction each")
        results.rawLocalWrite = try RawInsert(table: "notes", from: seeder.store.writer)
            .time(into: folder.appending(path: "raw-local-writes.sqlite"), table: "notes", transactions: .perRow)

        // (d) The seeding device pushes them all in one sync.
        progress("pushing")
        try await seeder.running {
            let (start, cpu) = (clock.now, ProcessMetrics.cpuSeconds())
            let (report, retries) = try await seeder.syncRetrying()
            results.pushSeconds = (clock.now - start).seconds
            results.pushCPUSeconds = ProcessMetrics.cpuSeconds() - cpu
            results.retries += retries
            results.pushRequests = report.requests
            guard retries > 0 || report.pushed == options.rows, report.rejected == 0 else {
                throw BenchmarkError("the seeding push sent \(report.pushed) and had \(report.rejected) rejected of \(options.rows)")
            }
        }

        // (a), (c), (e) A fresh on-disk device in a process of its own: initial sync, then no-op syncs.
        progress("pushed in \(results.pushSeconds) s; initial sync of a fresh device in its own process")
        let deviceStore = folder.appending(path: "device.sqlite")
        let device = try await DeviceChildProcess.run(
            .init(endpoint: endpoint, email: email, storeURL: deviceStore, expectedRows: options.rows, noOpSyncs: options.noOpSyncs),
            password: password
        )
        results.device = device
        results.retries += device.report.retries
        progress("initial sync in \(device.report.initialSyncSeconds) s, peak \(device.report.peakMiB) MiB")

        // (b) The rows the device stored, into an empty copy of its table in one transaction.
        progress("raw SQLite insert of the same rows")
        let deviceRows = try RawInsert(table: "notes", from: DatabasePool(path: deviceStore.path()))
        guard deviceRows.rows.count == options.rows else { throw BenchmarkError("the fresh device holds \(deviceRows.rows.count) of \(options.rows) notes") }
        // The median of three: on this shared machine one insert of the same rows took anywhere from 0.5× to 2× another
        // minutes apart, and every ratio divides by this one.
        let rawInserts = try (0..<3).map { try deviceRows.time(into: folder.appending(path: "raw-\($0).sqlite"), table: "notes", transactions: .one) }
        results.rawInsert = rawInserts.sorted(by: { $0.seconds < $1.seconds })[1]

        // (h) 10 changes into a large store against a small one.
        if options.largeRows > 0 {
            results.largeStore = try await LargeStoreBenchmark(endpoint: endpoint, folder: folder, largeRows: options.largeRows).run()
        }
        results.serverProcessPeakMiB = ProcessMetrics.peakResidentMiB()
        return results
    }
}
