import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ferry-benchmark`: initial sync against raw SQLite inserts of the same rows, no-op sync latency, push
/// throughput and peak memory, printed as a table (DESIGN.md §8; results go to docs/benchmarks.md).
///
/// ```
/// swift build -c release --product ferry-benchmark
/// .build/release/ferry-benchmark --rows 100000 [--postgres postgres://user@host:port/db]
/// ```
@main
struct SyncBenchmark {
    struct Options {
        var rows = 100_000
        var postgresURL: String?
        var noOpSyncs = 20

        static let usage = "usage: ferry-benchmark [--rows N] [--postgres URL] [--noop-syncs N]"

        static func parse(_ arguments: [String]) -> Options {
            var options = Options()
            var iterator = arguments.makeIterator()
            while let argument = iterator.next() {
                switch argument {
                case "--rows":
                    guard let value = iterator.next().flatMap(Int.init), value > 0 else { fail("--rows needs a positive number") }
                    options.rows = value
                case "--postgres":
                    guard let value = iterator.next() else { fail("--postgres needs a URL") }
                    options.postgresURL = value
                case "--noop-syncs":
                    guard let value = iterator.next().flatMap(Int.init), value > 0 else { fail("--noop-syncs needs a positive number") }
                    options.noOpSyncs = value
                case "-h", "--help":
                    print(usage)
                    exit(0)
                default:
                    fail("unknown argument \(argument)")
                }
            }
            return options
        }

        static func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("ferry-benchmark: \(message)\n\(usage)\n".utf8))
            exit(64)
        }
    }

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
        let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
        let engine: TestEngine
        if let url = options.postgresURL {
            setenv(TestEngine.postgresURLVariable, url, 1)
            engine = .postgres
        } else {
            engine = .sqlite
        }
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-benchmark-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        log("ferry-benchmark: \(options.rows) rows, server on \(engine)")
        let results = try await measure(options, engine: engine, folder: folder)
        print(results.table(rows: options.rows, engine: engine))
    }

    /// Starts the server, runs every measure, stops the server.
    nonisolated static func measure(_ options: Options, engine: TestEngine, folder: URL) async throws -> Results {
        try await LiveServer.with(engine, schema: schema, configure: { $0.useFastPasswordHashing() }) { server in
            try await run(options, server: server, folder: folder)
        }
    }

    struct Results {
        var localWriteSeconds = 0.0
        var pushSeconds = 0.0
        var pushCPUSeconds = 0.0
        var pushRequests = 0
        var initialSyncSeconds = 0.0
        var initialSyncCPUSeconds = 0.0
        var initialSyncRequests = 0
        var rawInsertSeconds = 0.0
        var rawInsertCPUSeconds = 0.0
        var noOpMilliseconds: [Double] = []
        var peakMiB = 0.0
        var retries = 0

        func table(rows: Int, engine: TestEngine) -> String {
            let initial = Double(rows) / initialSyncSeconds
            let raw = Double(rows) / rawInsertSeconds
            let sorted = noOpMilliseconds.sorted()
            let median = sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            func number(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
            return """

                | Measure (N = \(rows), server on \(engine)) | Result |
                |---|---:|
                | (a) initial sync, fresh device (pull + apply) | \(number(initial)) rows/s (\(number(initialSyncSeconds, 2)) s, \(initialSyncRequests) requests; CPU \(number(initialSyncCPUSeconds, 2)) s) |
                | (b) raw SQLite insert, same rows and table, one transaction | \(number(raw)) rows/s (\(number(rawInsertSeconds, 2)) s; CPU \(number(rawInsertCPUSeconds, 2)) s) |
                | (a) / (b) | \(number(initial / raw, 4)) (raw insert is \(number(raw / initial, 1))× faster) |
                | (a) / (b) by CPU time (whole process) | \(number(rawInsertCPUSeconds / initialSyncCPUSeconds, 4)) |
                | (c) no-op sync latency, median of \(sorted.count) | \(number(median, 2)) ms (min \(number(sorted.first ?? 0, 2)), max \(number(sorted.last ?? 0, 2))) |
                | (d) push throughput, \(rows) local writes in one `sync()` | \(number(Double(rows) / pushSeconds)) mutations/s (\(number(pushSeconds, 2)) s, \(pushRequests) requests; CPU \(number(pushCPUSeconds, 2)) s) |
                | local writes (`put`, one transaction each, in-memory store) | \(number(Double(rows) / localWriteSeconds)) writes/s |
                | (e) peak memory (ru_maxrss, whole process: server + devices) | \(number(peakMiB, 1)) MiB |
                \(retries == 0 ? "" : "\nWarning: \(retries) sync(s) failed and were retried (timed in); the numbers above include the failed attempts.\n")
                """
        }
    }

    static func run(_ options: Options, server: LiveServer, folder: URL) async throws -> Results {
        var results = Results()
        let email = "bench-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "correct horse battery"

        // Seed: one device writes N rows locally, then pushes them through the protocol (d).
        let seeder = try await Device.signIn(server, email: email, password: password, signUp: true, fileURL: nil)
        let clock = ContinuousClock()
        results.localWriteSeconds = try clock.measure {
            for index in 0..<options.rows {
                try seeder.store.put(collection: "notes", fields: fields(index))
                if (index + 1) % 10_000 == 0 { log("  \(index + 1) local writes") }
            }
        }.seconds
        log("wrote \(options.rows) rows locally in \(results.localWriteSeconds) s; pushing")
        try await seeder.running {
            let (start, cpu) = (clock.now, processCPUSeconds())
            let (report, retries) = try await seeder.syncRetrying()
            results.pushSeconds = (clock.now - start).seconds
            results.pushCPUSeconds = processCPUSeconds() - cpu
            results.retries += retries
            results.pushRequests = report.requests
            guard retries > 0 || report.pushed == options.rows, report.rejected == 0 else {
                throw BenchmarkError("the seeding push sent \(report.pushed) and had \(report.rejected) rejected of \(options.rows)")
            }
        }
        log("pushed in \(results.pushSeconds) s; initial sync of a fresh device")

        // (a) A fresh device (an on-disk store) pulls and applies everything; then (c) no-op syncs.
        let fresh = try await Device.signIn(server, email: email, password: password, signUp: false, fileURL: folder.appending(path: "device.sqlite"))
        try await fresh.running {
            let (start, cpu) = (clock.now, processCPUSeconds())
            let (report, retries) = try await fresh.syncRetrying()
            results.initialSyncSeconds = (clock.now - start).seconds
            results.initialSyncCPUSeconds = processCPUSeconds() - cpu
            results.retries += retries
            results.initialSyncRequests = report.requests
            guard retries > 0 || report.applied == options.rows else {
                throw BenchmarkError("the initial sync applied \(report.applied) of \(options.rows) rows")
            }
            log("initial sync in \(results.initialSyncSeconds) s; \(options.noOpSyncs) no-op syncs")
            for _ in 0..<options.noOpSyncs {
                let start = clock.now
                let report = try await fresh.engine.sync()
                results.noOpMilliseconds.append((clock.now - start).seconds * 1000)
                guard report.applied == 0 else { throw BenchmarkError("a no-op sync applied \(report.applied) rows") }
            }
        }
        guard try fresh.store.list(collection: "notes").count == options.rows else {
            throw BenchmarkError("the fresh device does not hold \(options.rows) notes")
        }

        // (b) The same rows into the same table (its DDL copied from the device) in one transaction, with GRDB.
        log("raw SQLite insert of the same rows")
        (results.rawInsertSeconds, results.rawInsertCPUSeconds) = try rawInsertSeconds(from: fresh.store, into: folder.appending(path: "raw.sqlite"), clock: clock)

        results.peakMiB = peakResidentMiB()
        return results
    }

    /// The wire fields of row `index`: deterministic, varied, a realistic size (~150 bytes).
    static func fields(_ index: Int) -> [String: JSONValue] {
        [
            "title": .string("Note \(index)"),
            "body": .string("Body of note \(index): " + String(repeating: "lorem ipsum ", count: 8 + index % 5)),
            "rank": .number(Double(index % 1000)),
            "score": .number(Double(index % 400) / 4),
            "done": .bool(index % 3 == 0),
        ]
    }

    /// Copies the device's `notes` table definition and rows, then times inserting the rows into an empty copy:
    /// wall seconds and the process's CPU seconds.
    static func rawInsertSeconds(from store: LocalStore, into path: URL, clock: ContinuousClock) throws -> (wall: Double, cpu: Double) {
        let (ddl, columns, rows) = try store.writer.read { db in
            let ddl = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE tbl_name = 'notes' AND sql IS NOT NULL ORDER BY type DESC")
            let columns = try db.columns(in: "notes").map(\.name)
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM notes").map { row in columns.map { row[$0] as DatabaseValue } }
            return (ddl, columns, rows)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let pool = try DatabasePool(path: path.path(), configuration: configuration)
        try pool.write { db in
            for statement in ddl { try db.execute(sql: statement) }
        }
        let sql = "INSERT INTO notes (\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        let cpu = processCPUSeconds()
        let seconds = try clock.measure {
            try pool.write { db in
                let statement = try db.makeStatement(sql: sql)
                for row in rows {
                    try statement.execute(arguments: StatementArguments(row))
                }
            }
        }.seconds
        let cpuSeconds = processCPUSeconds() - cpu
        let count = try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes") ?? 0 }
        guard count == rows.count else { throw BenchmarkError("the raw insert holds \(count) of \(rows.count) rows") }
        return (seconds, cpuSeconds)
    }

    /// CPU seconds (user + system, every thread) this process has used so far. On a shared machine whose other
    /// tenants steal time, CPU time moves far less between runs than wall time does.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The process's peak resident set size in MiB (Linux reports KiB, macOS bytes).
    static func peakResidentMiB() -> Double {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return Double(usage.ru_maxrss) / 1_048_576
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
        #endif
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(Data("[\(Date().formatted(.iso8601))] \(message)\n".utf8))
    }
}

/// One device of the benchmark: its session, store and engine.
struct Device {
    let store: LocalStore
    let engine: SyncEngine

    static func signIn(_ server: LiveServer, email: String, password: String, signUp: Bool, fileURL: URL?) async throws -> Device {
        let auth = AuthClient(endpoint: ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey), store: InMemorySessionStore(), logger: .testing)
        let session = signUp ? try await auth.signUp(email: email, password: password) : try await auth.signIn(email: email, password: password)
        let client = SyncClient(auth: auth)
        let schema = try await client.schema()
        let store = try fileURL.map { try LocalStore(fileURL: $0, schema: schema, defaultSpace: session.user.id, logger: .testing) }
            ?? LocalStore.inMemory(schema: schema, defaultSpace: session.user.id, logger: .testing)
        // The server takes a push only from a session bound to the pushing device.
        let keys = DeviceKeyPair.generate()
        _ = try await client.registerDevice(
            store.deviceId, DeviceRegistration(name: "Benchmark device", type: .linux, hostname: "bench.local", publicKey: keys.publicKeyBase64), keys: keys
        )
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        configuration.localChangeDebounce = .seconds(86_400)
        return Device(store: store, engine: SyncEngine(store: store, remote: client, configuration: configuration, logger: .testing))
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
                SyncBenchmark.log("sync failed (\(error)); retrying")
            }
        }
    }

    /// Runs `body` while the engine runs (``SyncEngine/sync()`` needs `run()`), then stops the engine.
    func running(_ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            defer { group.cancelAll() }
            try await body()
        }
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
