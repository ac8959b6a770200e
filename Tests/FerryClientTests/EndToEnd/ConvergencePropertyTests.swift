import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Logging
import Testing

/// Random interleavings of edits, deletes, offline periods, syncs and server restarts on three devices of one user,
/// against a real server on each engine (docs/architecture.md, invariants 1 and 4).
///
/// Every local write is recorded as the device queued it (read back from the outbox right after the write, so
/// the test sees the clocks the store assigned). At the end every device syncs until quiescent, and the test
/// checks the devices against each other and against a state it computes on its own: the merge, with
/// ``RecordState/merge(_:)``, of every write the server accepted, plus the delete cascade. Which writes the
/// server refuses is predicted by a small model of the server's rules, replayed in the order the devices pushed.
///
/// A schedule is cheap: one server and database per engine serves every schedule, each with a new account (its own
/// personal space), and a restart stops and starts that server on the same database and port between two steps.
/// `FERRY_CONVERGENCE_SCHEDULES=N` runs N schedules per engine (default 50); a failing schedule names its seed, and
/// `FERRY_CONVERGENCE_SEED=<seed>` replays just that one.
@Suite("Convergence, property-based")
struct ConvergencePropertyTests {
    static let steps = 60

    /// Schedules per engine.
    static var scheduleCount: Int {
        ProcessInfo.processInfo.environment["FERRY_CONVERGENCE_SCHEDULES"].flatMap(Int.init).map { max(1, $0) } ?? 50
    }

    /// The seeds of the schedules: the replayed one, or the same list on every run (earlier fixed seeds first).
    static var seeds: [UInt64] {
        if let text = ProcessInfo.processInfo.environment["FERRY_CONVERGENCE_SEED"], let seed = UInt64(text) { return [seed] }
        let fixed: [UInt64] = [0xF0E1_2026, 7, 424_242]
        var generator = SplitMix64(seed: 0xC0DE_5EED)
        return (0..<scheduleCount).map { $0 < fixed.count ? fixed[$0] : generator.next() >> 1 }
    }

    @Test("random schedules of edits, deletes, offline periods, syncs and server restarts on three devices end with identical rows everywhere, and no acknowledged write is lost",
          arguments: TestEngine.available)
    func convergence(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let configuration = try database.endToEndConfiguration(schema: ConvergenceModel.schema)
            let server = RestartableServer(try await LiveServer.start(configuration))
            let started = ContinuousClock.now
            var totals = ConvergenceTotals()
            do {
                for seed in Self.seeds {
                    do {
                        totals.add(try await Self.schedule(seed, on: server))
                    } catch {
                        Issue.record("seed \(seed) (rerun with FERRY_CONVERGENCE_SEED=\(seed)) threw \(error)")
                        throw error
                    }
                }
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            print("convergence on \(engine): \(totals.schedules) schedules in \(ContinuousClock.now - started), \(totals)")
        }
    }

    /// One schedule: a new account with three devices, random steps, the final syncs and the checks.
    static func schedule(_ seed: UInt64, on server: RestartableServer) async throws -> ConvergenceTotals {
        let endpoint = await server.endpoint
        let email = uniqueEmail("converge-\(seed)")
        var signedIn: [ConvergenceDevice] = []
        for index in 0..<3 {
            signedIn.append(try await ConvergenceDevice.signIn(endpoint, email: email, signUp: index == 0))
        }
        let devices = signedIn
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask { try await device.engine.run() }
            }
            defer { group.cancelAll() }
            var run = ConvergenceRun(seed: seed, devices: devices, server: server)
            for step in 0..<Self.steps {
                try await run.step(step)
            }
            try await run.quiesce()
            try run.check()
            return run.totals
        }
    }
}

/// The one server of an engine's schedules, which a step may restart.
actor RestartableServer {
    private var current: LiveServer
    /// How many times it was restarted.
    private(set) var restarts = 0

    init(_ server: LiveServer) {
        current = server
    }

    /// Where clients reach it (the same across restarts).
    var endpoint: ServerEndpoint {
        ServerEndpoint(baseURL: current.baseURL, apiKey: current.server.keys.anonKey)
    }

    /// Stops the server and starts it again on the same database and port.
    func restart() async throws {
        current = try await current.restarted()
        restarts += 1
    }

    func stop() async {
        await current.stop()
    }
}

/// What the schedules of one engine exercised, for the summary line.
struct ConvergenceTotals: CustomStringConvertible {
    var schedules = 0
    var writes = 0
    var deletes = 0
    var refused = 0
    var offlinePeriods = 0
    var restarts = 0

    mutating func add(_ other: ConvergenceTotals) {
        schedules += other.schedules
        writes += other.writes
        deletes += other.deletes
        refused += other.refused
        offlinePeriods += other.offlinePeriods
        restarts += other.restarts
    }

    var description: String {
        "\(writes) writes (\(deletes) deletes), \(refused) refused, \(offlinePeriods) offline periods, \(restarts) server restarts"
    }
}

/// One device of the run: its session, store and engine.
struct ConvergenceDevice: Sendable {
    let auth: AuthClient
    let store: LocalStore
    let engine: SyncEngine

    /// Signs in (or up) through `endpoint` and registers the device. Only the test decides when a device syncs: no
    /// periodic sync, local writes never push on their own, and a failed sync is not retried in the background.
    /// `timeout` bounds each request.
    static func signIn(_ endpoint: ServerEndpoint, email: String, signUp: Bool, timeout: Duration = .seconds(30)) async throws -> ConvergenceDevice {
        let auth = AuthClient(endpoint: endpoint, store: InMemorySessionStore(), transport: DefaultHTTPTransport(timeout: timeout), logger: .testing)
        let password = "correct horse 1"
        let session = signUp ? try await auth.signUp(email: email, password: password) : try await auth.signIn(email: email, password: password)
        let client = SyncClient(auth: auth)
        let store = try LocalStore.inMemory(schema: try await client.schema(), defaultSpace: session.user.id, logger: .testing)
        try await client.bindTestDevice(store)
        var configuration = SyncEngine.Configuration.manualSync(localChangeDebounce: .seconds(86_400))
        configuration.backoff = BackoffPolicy(initial: .seconds(86_400), maximum: .seconds(86_400))
        return ConvergenceDevice(auth: auth, store: store, engine: SyncEngine(store: store, remote: client, configuration: configuration, logger: .testing))
    }
}

/// The schema of the run and the server rules the test predicts with.
enum ConvergenceModel {
    static let parents = "lists"
    static let children = "items"
    static let link = "list_id"

    static let schema = """
        version: 1
        collections:
          lists:
            fields:
              title: { type: text, required: true }
              rank: integer
              done: bool
          items:
            parent: { collection: lists, field: list_id }
            fields:
              list_id: uuid
              text: text
              weight: real
        """

    /// The editable (non-link) fields of a collection.
    static func editableFields(of collection: String) -> [String] {
        collection == parents ? ["title", "rank", "done"] : ["text", "weight"]
    }

    static func randomValue(for field: String, using random: inout SplitMix64) -> JSONValue {
        switch field {
        case "title", "text": .string(["alpha", "beta", "gamma", "delta", "epsilon"].randomElement(using: &random)! + "\(Int.random(in: 0..<4, using: &random))")
        case "rank": .number(Double(Int.random(in: -50...50, using: &random)))
        case "done": .bool(Bool.random(using: &random))
        default: .number(Double(Int.random(in: 0..<40, using: &random)) / 4)
        }
    }
}

/// A record's identity across devices.
struct ConvergenceKey: Hashable, Comparable, CustomStringConvertible {
    var collection: String
    var id: UUID

    static func < (lhs: ConvergenceKey, rhs: ConvergenceKey) -> Bool {
        (lhs.collection, lhs.id.uuidString) < (rhs.collection, rhs.id.uuidString)
    }

    var description: String { "\(collection)/\(id.uuidString.lowercased().prefix(8))" }
}

/// One interleaving: the devices, what each wrote, and the test's model of the server.
struct ConvergenceRun {
    let seed: UInt64
    let devices: [ConvergenceDevice]
    /// The server, which a step may restart.
    let server: RestartableServer
    var random: SplitMix64
    var isOnline: [Bool]
    /// Every mutation each device queued, in its outbox order.
    var writes: [[Mutation]]
    /// The highest outbox id recorded, and pushed, per device.
    var recorded: [Int64]
    var pushed: [Int64]
    /// The server as the test predicts it, and the mutation ids it predicts it refuses, per device.
    var model: [ConvergenceKey: RecordState] = [:]
    var predictedRejections: [Set<Int64>]
    /// What happened, for failure messages.
    var trace: [String] = []

    /// Server restarts in this schedule.
    var restarts = 0

    init(seed: UInt64, devices: [ConvergenceDevice], server: RestartableServer) {
        self.seed = seed
        self.devices = devices
        self.server = server
        random = SplitMix64(seed: seed)
        isOnline = Array(repeating: true, count: devices.count)
        writes = Array(repeating: [], count: devices.count)
        recorded = Array(repeating: 0, count: devices.count)
        pushed = Array(repeating: 0, count: devices.count)
        predictedRejections = Array(repeating: [], count: devices.count)
    }

    var context: String { "seed \(seed) (rerun with FERRY_CONVERGENCE_SEED=\(seed)); last steps:\n" + trace.suffix(25).joined(separator: "\n") }

    // MARK: Steps

    mutating func step(_ index: Int) async throws {
        let number = Int.random(in: 0..<devices.count, using: &random)
        let device = devices[number]
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<30:
            let lists = try device.store.fetchAll(collection: ConvergenceModel.parents)
            if lists.isEmpty || Bool.random(using: &random) {
                var fields: [String: JSONValue] = [:]
                for field in ConvergenceModel.editableFields(of: ConvergenceModel.parents) {
                    fields[field] = ConvergenceModel.randomValue(for: field, using: &random)
                }
                let record = try device.store.save(collection: ConvergenceModel.parents, id: randomID(), fields: fields)
                note(index, number, "create \(ConvergenceKey(collection: ConvergenceModel.parents, id: record.id))")
            } else {
                let parent = lists.randomElement(using: &random)!
                var fields: [String: JSONValue] = [ConvergenceModel.link: .string(parent.id.uuidString.lowercased())]
                for field in ConvergenceModel.editableFields(of: ConvergenceModel.children) where Bool.random(using: &random) {
                    fields[field] = ConvergenceModel.randomValue(for: field, using: &random)
                }
                let record = try device.store.save(collection: ConvergenceModel.children, id: randomID(), fields: fields)
                note(index, number, "create \(ConvergenceKey(collection: ConvergenceModel.children, id: record.id)) under \(ConvergenceKey(collection: ConvergenceModel.parents, id: parent.id))")
            }
        case 30..<55:
            guard let target = try randomLiveRecord(on: device) else { return note(index, number, "edit: nothing to edit") }
            let names = ConvergenceModel.editableFields(of: target.collection)
            var fields: [String: JSONValue] = [:]
            while fields.isEmpty {
                for name in names where Int.random(in: 0..<3, using: &random) == 0 {
                    fields[name] = ConvergenceModel.randomValue(for: name, using: &random)
                }
            }
            try device.store.save(collection: target.collection, id: target.id, fields: fields)
            note(index, number, "edit \(target) \(fields.keys.sorted())")
        case 55..<67:
            guard let target = try randomLiveRecord(on: device) else { return note(index, number, "delete: nothing to delete") }
            try device.store.delete(collection: target.collection, id: target.id)
            note(index, number, "delete \(target)")
        case 67..<77:
            isOnline[number].toggle()
            note(index, number, isOnline[number] ? "online" : "offline")
        case 77..<80:
            // Between two steps nothing is in flight: a graceful restart must lose nothing a device was told.
            try await server.restart()
            restarts += 1
            note(index, number, "server restarted")
        default:
            guard isOnline[number] else { return note(index, number, "sync skipped: offline") }
            try await sync(number)
            note(index, number, "sync")
        }
        try recordWrites(of: number)
    }

    /// A record id drawn from the seeded generator, so the whole run (list order included) replays from the seed.
    mutating func randomID() -> UUID {
        let high = random.next(), low = random.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * index))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    mutating func note(_ step: Int, _ device: Int, _ text: String) {
        trace.append("#\(step) d\(device): \(text)")
    }

    mutating func randomLiveRecord(on device: ConvergenceDevice) throws -> ConvergenceKey? {
        let live = try [ConvergenceModel.parents, ConvergenceModel.children].flatMap { collection in
            try device.store.fetchAll(collection: collection).map { ConvergenceKey(collection: collection, id: $0.id) }
        }
        return live.randomElement(using: &random)
    }

    /// Reads the mutations the last write queued (with the clocks the store gave them) from the outbox.
    mutating func recordWrites(of number: Int) throws {
        let new = try devices[number].store.pendingMutations(limit: 10_000, after: recorded[number])
        writes[number] += new
        if let last = new.last { recorded[number] = last.mutationId }
    }

    /// Syncs one device, replaying its push on the model server first (the push precedes the pull).
    mutating func sync(_ number: Int) async throws {
        try recordWrites(of: number)
        let batch = writes[number].filter { $0.mutationId > pushed[number] }
        predictedRejections[number].formUnion(modelApply(batch))
        if let last = batch.last { pushed[number] = last.mutationId }
        let report = try await devices[number].engine.sync()
        let context = self.context
        #expect(report.pushed == batch.count, "device \(number) pushed \(report.pushed) of \(batch.count) queued writes; \(context)")
    }

    /// Every device online; all sync twice, so each has pulled every other's last push.
    mutating func quiesce() async throws {
        isOnline = Array(repeating: true, count: devices.count)
        for _ in 0..<2 {
            for number in devices.indices {
                try await sync(number)
                trace.append("final sync d\(number)")
            }
        }
    }

    // MARK: The server, as the test predicts it

    /// Applies one pushed batch with the server's rules; returns the ids the server refuses.
    ///
    /// The batch merges first; then every live record it wrote must hold: a child that is new, revived or moved to
    /// another parent needs a live parent, and a new or revived record needs its required fields (a child's link is
    /// required), so an edit of a child whose creation was refused is refused too (`invalid_record`). A record that
    /// breaks a rule refuses every mutation that made it, and the batch merges again without them. A delete that moves
    /// a parent's delete clock tombstones its children with that clock.
    mutating func modelApply(_ batch: [Mutation]) -> Set<Int64> {
        var refused = Set<Int64>()
        while true {
            var trial = model
            var contributors: [ConvergenceKey: [Int64]] = [:]
            for mutation in batch where !refused.contains(mutation.mutationId) {
                let key = ConvergenceKey(collection: mutation.collection, id: mutation.id)
                let existing = trial[key]
                var state = existing ?? RecordState()
                guard state.merge(mutation.state) else { continue }
                trial[key] = state
                contributors[key, default: []].append(mutation.mutationId)
                // Like the server: cascade whenever the delete clock moves, not only on the first delete.
                guard key.collection == ConvergenceModel.parents, state.isDeleted, let clock = state.clocks[RecordState.deletedKey],
                      existing?.clocks[RecordState.deletedKey] != clock else { continue }
                for (childKey, var child) in trial where childKey.collection == ConvergenceModel.children
                    && child.fields[ConvergenceModel.link]?.stringValue.flatMap(UUID.init(uuidString:)) == key.id {
                    guard child.merge(RecordState(clocks: [RecordState.deletedKey: clock], isDeleted: true)) else { continue }
                    trial[childKey] = child
                    contributors[childKey, default: []].append(mutation.mutationId)
                }
            }
            let broken = contributors.keys.filter { key in
                guard let state = trial[key], !state.isDeleted else { return false }
                let before = model[key]
                let revived = before == nil || before?.isDeleted == true
                if key.collection == ConvergenceModel.children,
                   revived || before?.fields[ConvergenceModel.link] != state.fields[ConvergenceModel.link],
                   let value = state.fields[ConvergenceModel.link], !value.isNull {
                    guard let parentID = value.stringValue.flatMap(UUID.init(uuidString:)),
                          let parent = trial[ConvergenceKey(collection: ConvergenceModel.parents, id: parentID)], !parent.isDeleted
                    else { return true }
                }
                let required = key.collection == ConvergenceModel.parents ? "title" : ConvergenceModel.link
                return revived && (state.fields[required] ?? .null).isNull
            }
            if broken.isEmpty {
                model = trial
                return refused
            }
            for key in broken { refused.formUnion(contributors[key] ?? []) }
        }
    }

    // MARK: Checks

    /// What the run exercised.
    var totals: ConvergenceTotals {
        let all = writes.joined()
        return ConvergenceTotals(
            schedules: 1, writes: all.count, deletes: all.filter { $0.op == .delete }.count,
            refused: predictedRejections.map(\.count).reduce(0, +), offlinePeriods: trace.filter { $0.hasSuffix("offline") }.count,
            restarts: restarts
        )
    }

    /// A device's view of one record: absent, a tombstone, or live with its fields and clocks.
    enum View: Hashable, CustomStringConvertible {
        case absent
        case deleted
        case live(fields: [String: JSONValue], clocks: [String: HLC])

        var description: String {
            switch self {
            case .absent: "absent"
            case .deleted: "deleted"
            case .live(let fields, _): "live \(fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            }
        }
    }

    /// The final state computed on its own: every accepted write merged (in any order), then the cascade.
    func expectedState() -> [ConvergenceKey: RecordState] {
        var expected: [ConvergenceKey: RecordState] = [:]
        for (number, mutations) in writes.enumerated() {
            for mutation in mutations where !predictedRejections[number].contains(mutation.mutationId) {
                expected[ConvergenceKey(collection: mutation.collection, id: mutation.id), default: RecordState()].merge(mutation.state)
            }
        }
        for (key, state) in expected where key.collection == ConvergenceModel.children && !state.isDeleted {
            if let parentID = state.fields[ConvergenceModel.link]?.stringValue.flatMap(UUID.init(uuidString:)),
               expected[ConvergenceKey(collection: ConvergenceModel.parents, id: parentID)]?.isDeleted == true {
                expected[key]?.isDeleted = true
            }
        }
        return expected
    }

    func view(of device: ConvergenceDevice, _ key: ConvergenceKey) throws -> View {
        guard let record = try device.store.fetch(collection: key.collection, id: key.id, includeDeleted: true) else { return .absent }
        return record.isDeleted ? .deleted : .live(fields: record.fields, clocks: record.clocks)
    }

    func check() throws {
        let context = self.context
        let expected = expectedState()
        let allKeys = Set(writes.joined().map { ConvergenceKey(collection: $0.collection, id: $0.id) })
        var views: [[ConvergenceKey: View]] = []

        for (number, device) in devices.enumerated() {
            #expect(try device.store.pendingCount() == 0, "device \(number) still has unsent writes; \(context)")

            // The refused writes are exactly the predicted ones, each visible with its reason.
            let rejections = try device.store.rejections()
            #expect(Set(rejections.map(\.mutation.mutationId)) == predictedRejections[number],
                    "device \(number): rejections \(rejections.map { "\($0.mutation.mutationId):\($0.code)" }) ≠ predicted \(predictedRejections[number].sorted()); \(context)")
            for rejection in rejections {
                #expect([ErrorCode.parentMissing.rawValue, ErrorCode.invalidRecord.rawValue].contains(rejection.code), "device \(number): unexpected rejection \(rejection.code): \(rejection.message); \(context)")
            }

            var deviceViews: [ConvergenceKey: View] = [:]
            for key in allKeys { deviceViews[key] = try view(of: device, key) }
            views.append(deviceViews)

            // No live row the test does not know of, and list() agrees with get().
            for collection in [ConvergenceModel.parents, ConvergenceModel.children] {
                let listed = Set(try device.store.fetchAll(collection: collection).map { ConvergenceKey(collection: collection, id: $0.id) })
                let live = Set(deviceViews.filter { $0.key.collection == collection && $0.value != .absent && $0.value != .deleted }.keys)
                #expect(listed == live, "device \(number): list(\(collection)) disagrees with get(); \(context)")
            }

            // Against the independent expectation.
            for key in allKeys.sorted() {
                let actual = deviceViews[key]!
                guard let state = expected[key] else {
                    // Only refused writes made this record: it may linger on its device, never live.
                    #expect(actual == .absent || actual == .deleted, "device \(number): \(key) was refused by the server but is \(actual); \(context)")
                    continue
                }
                let want: View = state.isDeleted ? .deleted : .live(fields: state.fields, clocks: state.clocks)
                #expect(actual == want, "device \(number): \(key) is \(actual), expected \(want); \(context)")
            }
        }

        // Identical everywhere (records the server knows of).
        for number in views.indices.dropFirst() {
            for key in allKeys.sorted() where expected[key] != nil && views[number][key] != views[0][key] {
                Issue.record("\(key): device 0 has \(views[0][key]!), device \(number) has \(views[number][key]!); \(context)")
            }
        }

        // Tombstone clocks agree too: the server re-cascades whenever a parent's delete clock moves forward, so after
        // concurrent deletes of one parent every child carries the later clock on every device.
        for key in allKeys.sorted() where expected[key]?.isDeleted == true {
            let clocks = try devices.map { try $0.store.fetch(collection: key.collection, id: key.id, includeDeleted: true)?.clocks[RecordState.deletedKey] }
            #expect(Set(clocks).count == 1, "\(key): tombstone clocks differ between devices: \(clocks.map { $0?.description ?? "none" }); \(context)")
        }

        // No acknowledged write is lost: each accepted field write is in the final row or lost to a later clock.
        for (number, mutations) in writes.enumerated() {
            for mutation in mutations where mutation.op == .upsert && !predictedRejections[number].contains(mutation.mutationId) {
                let key = ConvergenceKey(collection: mutation.collection, id: mutation.id)
                guard case .live(let fields, let clocks) = views[number][key] else { continue }
                for (field, clock) in mutation.clocks where field != RecordState.deletedKey {
                    let final = clocks[field] ?? .zero
                    #expect(final > clock || (final == clock && fields[field] == mutation.fields[field]),
                            "device \(number): write \(mutation.mutationId) of \(key).\(field) was lost; \(context)")
                }
            }
        }

        // The model server agrees with the order-independent merge on what is live.
        for key in allKeys {
            #expect(model[key]?.isDeleted == expected[key]?.isDeleted, "model server and merge disagree on \(key); \(context)")
        }
    }
}
