import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The server killed with SIGKILL at random points of small pushes loses nothing and duplicates nothing
/// (docs/architecture.md, invariants 1 and 3).
///
/// Each trial writes a few dozen records offline into a `ferry` profile's store, starts `ferry sync` with a small
/// batch size, and kills the server after a random number of acknowledged batches plus a random few milliseconds
/// (so the kill lands inside a transaction, between requests, or in the pull), then restarts it. After every kill
/// the server holds no record twice and every record that left the outbox (acknowledged); the unacknowledged rest
/// is pushed again by the next trial's sync, on top of its own. A last clean sync must leave every record exactly
/// once and an empty outbox. `FERRY_CRASH_TRIALS=N` runs N trials per engine (default 20); a failure names its seed,
/// and `FERRY_CRASH_SEED=<seed>` replays its record counts, batch sizes and kill points (not the exact timing).
@Suite("Crash recovery")
struct CrashRecoveryTests {
    static var trials: Int {
        ProcessInfo.processInfo.environment["FERRY_CRASH_TRIALS"].flatMap(Int.init).map { max(1, $0) } ?? 20
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["FERRY_CRASH_SEED"].flatMap(UInt64.init) ?? SplitMix64.freshSeed()
    }

    @Test("SIGKILL at random points during small pushes, then a restart: no acknowledged record lost, none stored twice; a last sync leaves every record once",
          arguments: TestEngine.available)
    func killedMidPush(_ engine: TestEngine) async throws {
        let seed = Self.seed
        try await TestDatabase.with(engine) { database in
            var harness = try await CrashHarness.start(database)
            var random = SplitMix64(seed: seed)
            var written: Set<String> = []
            var interrupted = 0
            var crashed = 0
            let started = ContinuousClock.now
            for trial in 0..<Self.trials {
                let context = "trial \(trial), seed \(seed) (rerun with FERRY_CRASH_SEED=\(seed)) on \(engine)"
                let count = Int.random(in: 10...40, using: &random)
                let names = (0..<count).map { "client \(trial)-\($0)" }
                try harness.write(names)
                written.formUnion(names)
                let pending = try harness.pendingNames().count
                let batchSize = Int.random(in: 1...6, using: &random)
                let batches = (pending + batchSize - 1) / batchSize
                // Kill after 1 … batches - 1 acknowledged batches plus up to 5 ms, or (0) up to 300 ms after the
                // sync starts: while it starts, fetches the schema or pushes its first batch.
                let acknowledged = Int.random(in: 0..<max(1, batches), using: &random)
                let extra = Duration.microseconds(Int64.random(in: 0..<(acknowledged == 0 ? 300_000 : 5_000), using: &random))
                let sync = try FerryProcess(["sync", "--json", "--progress", "--batch-size", "\(batchSize)"], environment: harness.cli)
                var landed = true
                for _ in 0..<acknowledged where landed {
                    landed = await sync.waitForLine(startingWith: "progress: pushed") != nil
                }
                try await Task.sleep(for: extra)  // the random kill point, not a synchronisation
                harness.server.signal(SIGKILL)
                _ = await harness.server.waitForExit()
                let outcome = await sync.waitForExit(timeout: .seconds(120))
                if outcome.status != 0 { interrupted += 1 }
                if outcome.stderr.contains("Fatal error") {
                    crashed += 1
                    withKnownIssue("URLSession on Linux stops the process when a connection ends without a whole response head (swiftlang/swift-corelibs-foundation#5285)") {
                        Issue.record("`ferry sync` crashed instead of failing: \(outcome.stderr.split(separator: "\n").first { $0.contains("Fatal error") } ?? ""); \(context)")
                    }
                }

                // After the kill: nothing twice, nothing acknowledged missing, nothing unknown.
                let stored = try await database.strings("SELECT name FROM clients")
                let unique = Set(stored)
                #expect(stored.count == unique.count, "\(stored.count - unique.count) records stored twice; \(context)")
                let acknowledgedNames = written.subtracting(try harness.pendingNames())
                let lost = acknowledgedNames.subtracting(unique)
                #expect(lost.isEmpty, "\(lost.count) acknowledged records lost, e.g. \(lost.sorted().prefix(3)); \(context)")
                #expect(unique.isSubset(of: written), "the server holds records nobody wrote; \(context)")
                try await harness.restart()
            }

            let resumed = try await FerryProcess(["sync", "--json"], environment: harness.cli).waitForExit(timeout: .seconds(300))
            let context = "seed \(seed) (rerun with FERRY_CRASH_SEED=\(seed)) on \(engine)"
            #expect(resumed.status == 0, "\(resumed.stderr); \(context)")
            let report = try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(report["pending"] as? Int == 0, "the outbox is empty; \(context)")
            let stored = try await database.strings("SELECT name FROM clients")
            #expect(stored.count == written.count && Set(stored) == written,
                    "\(written.count) written, \(stored.count) stored, \(Set(stored).count) distinct; \(context)")
            #expect(interrupted * 2 >= Self.trials, "only \(interrupted) of \(Self.trials) kills interrupted a sync; \(context)")
            print("crash recovery on \(engine), seed \(seed): \(Self.trials) kills, \(interrupted) mid-sync (\(crashed) of them crashed the client), \(written.count) records, \(ContinuousClock.now - started)")
            harness.server.signal(SIGTERM)
            _ = await harness.server.waitForExit()
        }
    }
}

/// A `ferry serve` process on a fixed port over a test database, and a signed-up `ferry` profile that talks to it.
struct CrashHarness {
    let database: TestDatabase
    let serve: [String]
    let cli: [String: String]
    let profile: URL
    let space: UUID
    var server: FerryProcess

    static func start(_ database: TestDatabase) async throws -> CrashHarness {
        let served = try await ServedProcess.start(database, schema: "ops.yaml")
        let (serve, server) = (served.arguments, served.process)
        let home = database.folder + "/home"
        let cli = ["FERRY_SERVER": served.baseURL, "FERRY_API_KEY": served.anonKey, "FERRY_HOME": home]
        let email = uniqueEmail("crash")
        let signup = try await FerryProcess.run(["signup", email, "--json"], environment: cli.merging(["FERRY_PASSWORD": "correct horse 1"]) { $1 })
        try #require(signup.status == 0, "\(signup.stderr)")
        let account = try JSONSerialization.jsonObject(with: Data(signup.stdout.utf8)) as? [String: Any]
        let space = try #require(UUID(uuidString: account?["user_id"] as? String ?? ""))
        return CrashHarness(
            database: database, serve: serve, cli: cli, profile: URL(filePath: home).appending(path: "profiles/default"),
            space: space, server: server
        )
    }

    /// Opens the profile's store (while no `ferry` process has it open).
    func openStore() throws -> LocalStore {
        let schema = try JSONDecoder().decode(Schema.self, from: Data(contentsOf: profile.appending(path: "schema.json")))
        return try LocalStore(fileURL: profile.appending(path: "store.sqlite"), schema: schema)
    }

    /// Writes one client record per name offline, as `ferry put` would.
    func write(_ names: [String]) throws {
        let store = try openStore()
        for name in names {
            _ = try store.save(collection: "clients", space: space, fields: ["name": .string(name)])
        }
    }

    /// The names of the records still in the outbox (not acknowledged).
    func pendingNames() throws -> Set<String> {
        Set(try openStore().pendingMutations(limit: 100_000).compactMap { $0.fields["name"]?.stringValue })
    }

    /// Starts the server again on the same port and database.
    mutating func restart() async throws {
        server = try await Self.launch(serve)
    }

    static func launch(_ arguments: [String]) async throws -> FerryProcess {
        let process = try FerryProcess(arguments)
        guard await process.waitForLine(startingWith: "Ferry listening on") != nil else {
            let exit = await process.waitForExit(timeout: .seconds(5))
            throw CrashHarnessError(description: "the server did not start: \(exit.stderr)")
        }
        return process
    }
}

struct CrashHarnessError: Error, CustomStringConvertible {
    var description: String
}
