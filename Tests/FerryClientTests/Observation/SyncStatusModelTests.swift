@testable import FerryClient
import FerryCore
import Foundation
import Observation
import Testing

@Suite("SyncStatusModel: the engine's status on the main actor")
@MainActor
struct SyncStatusModelTests {
    /// Statuses in the order a consumer received them.
    @MainActor
    final class StatusLog {
        var statuses: [SyncStatus] = []
    }

    /// A status that differs from `base` (the engine publishes only changes).
    static func status(_ base: SyncStatus, pending: Int) -> SyncStatus {
        var status = base
        status.pendingCount = pending
        status.phase = pending.isMultiple(of: 2) ? .pushing : .idle
        return status
    }

    @Test("each status published reaches the model in order: onChange fires and status, the shortcuts and updateCount follow")
    func eachStatusInOrder() async throws {
        let harness = try EngineHarness()
        let engine = harness.engine
        let broadcast = await engine.broadcast
        let model = SyncStatusModel(engine: engine)
        #expect(model.status == engine.status, "the current status from the start, before the stream delivers it")
        #expect(await waitUntil { model.updateCount == 1 }, "the stream's replay of the current status")

        for pending in 1...10 {
            let changed = trackChanges { model.status }
            let status = Self.status(model.status, pending: pending)
            broadcast.publish(status)
            #expect(await waitUntil { changed.hasFired && model.status == status }, "status \(pending)")
            #expect(model.updateCount == 1 + pending)
            #expect(model.pendingCount == pending)
            #expect(model.phase == status.phase)
            #expect(model.isSynchronizing == (status.phase == .pushing))
        }
    }

    @Test("a burst of 100 (more than the 64 ordinary subscribers keep) published while the main actor is busy reaches the model whole, the last status last")
    func burst() async throws {
        let harness = try EngineHarness()
        let broadcast = await harness.engine.broadcast
        let model = SyncStatusModel(engine: harness.engine)
        // No suspension until the wait: every status waits in the model's stream, past the 64 that the engine's
        // ordinary subscribers keep.
        var last = model.status
        for pending in 1...100 {
            last = Self.status(last, pending: pending)
            broadcast.publish(last)
        }
        #expect(await waitUntil { model.updateCount == 1 + 100 })
        #expect(model.status == last)
    }

    @Test("through a real sync (push, then pull) the model assigns exactly the statuses the engine published")
    func throughSync() async throws {
        let harness = try EngineHarness()
        try harness.store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        // Both subscribe before the engine runs, so both start from the same replayed status.
        let log = StatusLog()
        let updates = harness.engine.statusUpdates()
        let collector = Task { @MainActor in
            for await status in updates { log.statuses.append(status) }
        }
        defer { collector.cancel() }
        let model = SyncStatusModel(engine: harness.engine)

        try await harness.run { harness in
            _ = try await harness.engine.sync()
        }
        let finished = harness.engine.status
        #expect(finished.lastSyncedAt != nil)
        #expect(finished.pendingCount == 0)
        #expect(await waitUntil { log.statuses.last == finished && model.status == finished })
        #expect(model.updateCount == log.statuses.count, "none skipped")
        #expect(log.statuses.contains { $0.phase == .pushing })
        #expect(log.statuses.contains { $0.phase == .pulling })
        #expect(model.lastSyncedAt == finished.lastSyncedAt)
        #expect(model.lastError == nil)
        #expect(model.progress == nil)
    }

    @Test("stop() freezes the status; start() resubscribes and catches up with the current one")
    func stopAndStart() async throws {
        let harness = try EngineHarness()
        let broadcast = await harness.engine.broadcast
        let model = SyncStatusModel(engine: harness.engine)
        #expect(await waitUntil { model.updateCount == 1 })
        model.stop()

        let changed = Self.status(model.status, pending: 7)
        broadcast.publish(changed)
        // A second model sees the change; by then a model still following would have seen it too.
        let witness = SyncStatusModel(engine: harness.engine)
        #expect(await waitUntil { witness.status == changed && witness.updateCount == 1 })
        #expect(model.status != changed)
        #expect(model.updateCount == 1)

        model.start()
        #expect(await waitUntil { model.status == changed })
        #expect(model.updateCount == 2, "the replay of the current status on resubscribing")
    }

    @Test("releasing the model releases it at once: its task holds it weakly and is cancelled")
    func release() async throws {
        let harness = try EngineHarness()
        var model: SyncStatusModel? = SyncStatusModel(engine: harness.engine)
        #expect(await waitUntil { model?.updateCount == 1 })
        weak let released = model
        model = nil
        #expect(released == nil)
    }
}
