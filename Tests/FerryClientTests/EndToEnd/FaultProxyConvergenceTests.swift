import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Three devices reach the real server through a ``FaultProxy`` that drops about one request in ten part-way
/// (mid-request, or mid-response after the server committed) and delays others, while they write and sync at random
/// (docs/architecture.md, invariants 1, 3 and 4).
///
/// Failed syncs are expected and counted. Then the faults stop, every device syncs until its outbox is empty, and
/// the devices and a fourth device that signs in afterwards (so it holds exactly what the server serves) must hold
/// identical rows: the merge of every write. A write leaves its device's outbox only once acknowledged, so every
/// write must be on the server then. A failure names its seed; `FERRY_FAULT_SEED=<seed>` replays the same schedule
/// and proxy decisions (the proxy's timing, and so which request each decision hits, may differ).
@Suite("Convergence through a faulty network")
struct FaultProxyConvergenceTests {
    static let steps = 150

    static let schema = """
        version: 1
        collections:
          notes:
            fields:
              title: { type: text, required: true }
              body: text
              rank: integer
        """

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["FERRY_FAULT_SEED"].flatMap(UInt64.init) ?? SplitMix64.freshSeed()
    }

    @Test("three devices behind a proxy that drops ~10 % of requests mid-request or mid-response and delays others converge once the faults stop, and no acknowledged write is lost",
          arguments: TestEngine.available)
    func convergesThroughFaults(_ engine: TestEngine) async throws {
        let seed = Self.seed
        try await LiveServer.with(engine, schema: Self.schema, configure: { $0.useFastPasswordHashing() }) { server in
            var configuration = FaultProxy.Configuration(seed: seed)
            configuration.isFaulty = false
            // The devices' transport is `DefaultHTTPTransport`; on Linux that is `HTTPClientTransport`, which a response
            // head cut short fails like any dropped connection (URLSession there stopped the process).
            configuration.cutsResponseHeads = true
            let proxy = try await FaultProxy.start(forwardingTo: server.port, configuration: configuration)
            do {
                try await Self.run(seed: seed, engine: engine, server: server, proxy: proxy)
            } catch {
                await proxy.stop()
                Issue.record("seed \(seed) (rerun with FERRY_FAULT_SEED=\(seed)) on \(engine) threw \(error)")
                throw error
            }
            await proxy.stop()
        }
    }

    static func run(seed: UInt64, engine: TestEngine, server: LiveServer, proxy: FaultProxy) async throws {
        let started = ContinuousClock.now
        let email = uniqueEmail("faults-\(seed)")
        let throughProxy = ServerEndpoint(baseURL: proxy.baseURL, apiKey: server.server.keys.anonKey)
        // The account is made straight at the server, with the default timeout: at the start of a full test run on
        // 2 cores, every suite signs up at once.
        _ = try await AuthClient(endpoint: ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey), store: InMemorySessionStore())
            .signUp(email: email, password: "correct horse 1")
        var signedIn: [ConvergenceDevice] = []
        for _ in 0..<3 {
            // 15 s instead of 30: a request the proxy drops fails fast, so a timeout here is only a loaded machine
            // (the faults are still off): signing in again is harmless.
            var attempt = 0
            while true {
                attempt += 1
                do {
                    signedIn.append(try await ConvergenceDevice.signIn(throughProxy, email: email, signUp: false, timeout: .seconds(15)))
                    break
                } catch let error as RemoteError where error.code == .requestTimedOut && attempt < 3 {
                    continue
                }
            }
        }
        let devices = signedIn
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask { try await device.engine.run() }
            }
            defer { group.cancelAll() }
            var run = FaultRun(seed: seed, devices: devices)
            proxy.setFaulty(true)
            for step in 0..<Self.steps {
                try await run.step(step)
            }
            proxy.setFaulty(false)
            try await run.settle()

            // A fourth device, straight to the server: what the server serves to anyone who pulls.
            let direct = ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey)
            let auditor = try await ConvergenceDevice.signIn(direct, email: email, signUp: false)
            group.addTask { try await auditor.engine.run() }
            try await auditor.engine.sync()
            try run.check(auditor: auditor)
            let statistics = proxy.statistics
            #expect(statistics.dropped > 0, "the proxy dropped nothing, so nothing was tested; seed \(seed)")
            print("faults on \(engine), seed \(seed): \(run.summary); proxy: \(statistics); \(ContinuousClock.now - started)")
        }
    }
}

/// One run through the faulty proxy: the devices, every write each queued, and what the syncs did.
struct FaultRun {
    let seed: UInt64
    let devices: [ConvergenceDevice]
    var random: SplitMix64
    /// Every mutation each device queued, in its outbox order, and the highest outbox id recorded.
    var writes: [[Mutation]]
    var recorded: [Int64]
    /// Writes whose outbox entry left while faults were on: each was acknowledged through the faulty network.
    var acknowledgedDuringFaults = 0
    var succeededSyncs = 0
    var failures: [String: Int] = [:]
    var trace: [String] = []

    init(seed: UInt64, devices: [ConvergenceDevice]) {
        self.seed = seed
        self.devices = devices
        random = SplitMix64(seed: seed)
        writes = Array(repeating: [], count: devices.count)
        recorded = Array(repeating: 0, count: devices.count)
    }

    var context: String { "seed \(seed) (rerun with FERRY_FAULT_SEED=\(seed)); last steps:\n" + trace.suffix(25).joined(separator: "\n") }

    var summary: String {
        let all = writes.joined()
        return "\(all.count) writes (\(all.filter { $0.op == .delete }.count) deletes), \(acknowledgedDuringFaults) acknowledged during faults, "
            + "\(succeededSyncs) syncs succeeded, failures \(failures.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" })"
    }

    mutating func step(_ index: Int) async throws {
        let number = Int.random(in: 0..<devices.count, using: &random)
        let device = devices[number]
        let roll = Int.random(in: 0..<100, using: &random)
        let live = try device.store.fetchAll(collection: "notes").map(\.id).sorted { $0.uuidString < $1.uuidString }
        switch roll {
        case 0..<30:
            let id = randomID()
            try device.store.save(collection: "notes", id: id, fields: [
                "title": .string("note \(index)"), "body": .string("body \(Int.random(in: 0..<100, using: &random))"),
                "rank": .number(Double(Int.random(in: -9...9, using: &random))),
            ])
            trace.append("#\(index) d\(number): create \(id.uuidString.prefix(8))")
        case 30..<60 where !live.isEmpty:
            let id = live.randomElement(using: &random)!
            var fields: [String: JSONValue] = [:]
            while fields.isEmpty {
                if Bool.random(using: &random) { fields["title"] = .string("title \(index)") }
                if Bool.random(using: &random) { fields["body"] = .string("edit \(index)") }
                if Bool.random(using: &random) { fields["rank"] = .number(Double(index)) }
            }
            try device.store.save(collection: "notes", id: id, fields: fields)
            trace.append("#\(index) d\(number): edit \(id.uuidString.prefix(8)) \(fields.keys.sorted())")
        case 60..<70 where !live.isEmpty:
            let id = live.randomElement(using: &random)!
            try device.store.delete(collection: "notes", id: id)
            trace.append("#\(index) d\(number): delete \(id.uuidString.prefix(8))")
        default:
            try recordWrites(of: number)
            let before = Set(try device.store.pendingMutations(limit: 100_000).map(\.mutationId))
            do {
                try await device.engine.sync()
                succeededSyncs += 1
                trace.append("#\(index) d\(number): sync")
            } catch let error as SyncError {
                failures[error.code.rawValue, default: 0] += 1
                trace.append("#\(index) d\(number): sync failed: \(error)")
                if let status = error.status, status >= 400 {
                    Issue.record("device \(number): the server answered \(status) \(error.code) (\(error.message)) to a well-formed request; \(context)")
                }
            }
            let after = Set(try device.store.pendingMutations(limit: 100_000).map(\.mutationId))
            acknowledgedDuringFaults += before.subtracting(after).count
        }
        try recordWrites(of: number)
    }

    /// Reads the mutations the last write queued (with the clocks the store gave them) from the outbox.
    mutating func recordWrites(of number: Int) throws {
        let new = try devices[number].store.pendingMutations(limit: 100_000, after: recorded[number])
        writes[number] += new
        if let last = new.last { recorded[number] = last.mutationId }
    }

    mutating func randomID() -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Faults off: each device syncs until its outbox is empty, then all sync once more, so each has pulled every
    /// other's last push.
    mutating func settle() async throws {
        for round in 0..<2 {
            for (number, device) in devices.enumerated() {
                var attempts = 0
                while true {
                    attempts += 1
                    do {
                        try await device.engine.sync()
                        if try device.store.pendingCount() == 0 { break }
                    } catch where attempts < 3 && !(error is CancellationError) {
                        // A connection the faults left half-open may fail once more; a clean network must not fail twice.
                        trace.append("final round \(round) d\(number): sync failed: \(error)")
                    }
                    if attempts >= 3 {
                        let pending = try device.store.pendingCount()
                        Issue.record("device \(number) still has \(pending) unsent writes after \(attempts) clean syncs; \(context)")
                        break
                    }
                }
                trace.append("final round \(round) d\(number): synced")
            }
        }
    }

    /// A device's view of one record, as compared across devices.
    func view(of device: ConvergenceDevice, _ id: UUID) throws -> String {
        guard let record = try device.store.fetch(collection: "notes", id: id, includeDeleted: true) else { return "absent" }
        if record.isDeleted { return "deleted @\(record.clocks[RecordState.deletedKey]?.description ?? "-")" }
        return record.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)@\(record.clocks[$0.key]?.description ?? "-")" }.joined(separator: " ")
    }

    func check(auditor: ConvergenceDevice) throws {
        let context = self.context
        var expected: [UUID: RecordState] = [:]
        for mutation in writes.joined() {
            expected[mutation.id, default: RecordState()].merge(mutation.state)
        }
        let ids = expected.keys.sorted { $0.uuidString < $1.uuidString }
        for (number, device) in devices.enumerated() {
            #expect(try device.store.pendingCount() == 0, "device \(number) still has unsent writes; \(context)")
            let refused = try device.store.rejections().map(\.code)
            #expect(refused.isEmpty, "device \(number): the server refused \(refused); \(context)")
        }

        for id in ids {
            let want = expected[id]!
            let onServer = try auditor.store.fetch(collection: "notes", id: id, includeDeleted: true)
            // Every write left its outbox acknowledged, so the server holds it (or a later write of the same field).
            #expect(onServer != nil, "\(id): acknowledged writes are missing from the server; \(context)")
            #expect(onServer?.isDeleted == want.isDeleted, "\(id): deleted on the server \(String(describing: onServer?.isDeleted)), expected \(want.isDeleted); \(context)")
            let reference = try view(of: auditor, id)
            if let onServer, !want.isDeleted {
                #expect(onServer.fields == want.fields && onServer.clocks == want.clocks,
                        "\(id): the server holds \(reference), the merge of every write is \(want.fields) \(want.clocks); \(context)")
            }
            for (number, device) in devices.enumerated() {
                let mine = try view(of: device, id)
                #expect(mine == reference, "\(id): device \(number) has \(mine), the server \(reference); \(context)")
            }
        }
        let listed = Set(try auditor.store.fetchAll(collection: "notes").map(\.id))
        #expect(listed == Set(ids.filter { expected[$0]?.isDeleted == false }), "the server holds rows no device wrote, or lacks some; \(context)")
    }
}
