import FerryClient
import FerryCore
import Foundation
import Testing

/// A ``SyncEngine`` over an in-memory store, a ``FakeSyncRemote`` and a ``ManualSleeper``, running for one test body.
struct EngineHarness {
    let fixture: StoreFixture
    let remote: FakeSyncRemote
    let sleeper = ManualSleeper()
    let engine: SyncEngine

    init(periodic: Duration? = nil, storeSchema: Schema = StoreFixture.schema, pushBatchSize: Int? = nil) throws {
        fixture = try StoreFixture(schema: storeSchema)
        remote = FakeSyncRemote(schema: StoreFixture.schema)
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = periodic
        if let pushBatchSize { configuration.pushBatchSize = pushBatchSize }
        configuration.backoff = BackoffPolicy(initial: .seconds(1), multiplier: 2, maximum: .seconds(60), jitter: 0.5)
        engine = SyncEngine(store: fixture.store, remote: remote, configuration: configuration, sleeper: sleeper, random: { 0.5 })
    }

    var store: LocalStore { fixture.store }

    /// Runs the engine while `body` runs, then stops it.
    func run(_ body: @Sendable (EngineHarness) async throws -> Void) async throws {
        let engine = self.engine
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try? await engine.run() }
            try await body(self)
            group.cancelAll()
        }
    }

    /// Waits (up to `timeout`) for a status for which `condition` holds; records an issue when none comes.
    /// The timeout catches a hang, not slowness: in a full run on 2 cores these tests take 10 s where alone they take 0.1 s.
    func waitForStatus(timeout: Duration = .seconds(90), _ condition: @escaping @Sendable (SyncStatus) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        let updates = engine.statusUpdates()
        let met = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in updates where condition(status) { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !met { Issue.record("the expected sync status did not come within \(timeout): \(engine.status)", sourceLocation: sourceLocation) }
    }

    /// Waits until `count` syncs have finished successfully and the engine is idle.
    func waitForCompletedSyncs(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let remote = self.remote
        await waitForStatus({ status in
            !status.isSynchronizing && status.lastError == nil && remote.pullCount >= count
        }, sourceLocation: sourceLocation)
    }
}
