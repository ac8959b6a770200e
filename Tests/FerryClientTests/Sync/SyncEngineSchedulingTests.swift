import FerryClient
import FerryCore
import Foundation
import Synchronization
import Testing

/// The scheduler on a manual clock: no real sleeps, every timer fires when the test moves time.
@Suite("SyncEngine: triggers, coalescing and backoff")
struct SyncEngineSchedulingTests {
    @Test("the field-service app: launch + first connectivity callback + became-active + three flaps within 100 ms → exactly one sync")
    func launchBurst() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            await engine.trigger(.launch)
            await engine.connectivityChanged(isReachable: true)    // the monitor's first callback: not a transition
            await engine.trigger(.foreground)
            for _ in 0..<3 {
                await engine.connectivityChanged(isReachable: false)
                await engine.connectivityChanged(isReachable: true)
            }
            await harness.sleeper.waitForSleepers(atLeast: 1)
            #expect(harness.sleeper.pendingDelays == [.milliseconds(250)], "one coalescing window, not one timer per trigger")
            harness.sleeper.advance(by: .milliseconds(100))
            #expect(harness.remote.pullsStarted == 0)
            harness.sleeper.advance(by: .milliseconds(150))
            await harness.waitForCompletedSyncs(1)
            #expect(await engine.startedSyncCount == 1)
            #expect(harness.remote.pullsStarted == 1)
            #expect(harness.sleeper.sleeperCount == 0, "no timer left that could start another sync")
            let report = try #require(await engine.lastReport)
            #expect(report.triggers == ["launch", "foreground", "connectivityRestored"])
            #expect(report.requests == 1, "an empty outbox costs no push request")
        }
    }

    @Test("any number of triggers during a sync produce exactly one follow-up, and none is dropped")
    func oneFollowUp() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            harness.remote.holdPulls()
            let first = Task { try await engine.sync() }
            await harness.remote.waitForPullsStarted(1)
            try harness.store.save(collection: "sermons", fields: StoreFixture.sermonFields)   // written mid-sync
            await harness.sleeper.waitForSleepers(atLeast: 1)   // its debounced local-change trigger
            await engine.trigger(.foreground)
            await engine.trigger(.periodic)
            await engine.trigger(.realtimePoke(space: harness.fixture.space, seq: 10))
            #expect(await engine.startedSyncCount == 1)
            harness.remote.releasePulls()
            let firstReport = try await first.value
            #expect(firstReport.triggers == ["manual"])
            await harness.waitForCompletedSyncs(2)
            #expect(await engine.startedSyncCount == 2)
            let followUp = try #require(await engine.lastReport)
            #expect(followUp.triggers == ["foreground", "periodic", "realtimePoke"])
            #expect(followUp.pushed == 1, "the write made mid-sync went out in the follow-up")
            #expect(try harness.store.pendingCount() == 0)

            // The debounced trigger of that write fires after the follow-up pushed it: nothing left, no third sync.
            harness.sleeper.advance(by: .milliseconds(300))
            let last = try await engine.sync()
            #expect(last.triggers == ["manual"])
            #expect(await engine.startedSyncCount == 3)
        }
    }

    @Test("resume() while the sync suspend() stopped is still winding down: the waiting callers get the next sync, not silence")
    func resumeDuringStop() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            harness.remote.holdPulls()
            let first = Task { try await engine.sync() }
            await harness.remote.waitForPullsStarted(1)
            await engine.suspend()   // the app goes to the background…
            await engine.resume()    // …and comes straight back, before the stopped sync has ended
            harness.remote.releasePulls()
            let report = try await first.value
            #expect(report.triggers.contains("manual"), "the caller's sync ran after resume()")
            #expect(await engine.startedSyncCount == 2)
        }
    }

    @Test("offline: triggers wait for the network and run as one sync when it comes back")
    func offline() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            await engine.connectivityChanged(isReachable: false)
            await engine.trigger(.launch)
            await engine.trigger(.periodic)
            #expect(engine.status.phase == .offline)
            #expect(harness.sleeper.sleeperCount == 0)
            await engine.connectivityChanged(isReachable: true)
            await harness.sleeper.waitForSleepers(atLeast: 1)
            harness.sleeper.advance(by: .milliseconds(250))
            await harness.waitForCompletedSyncs(1)
            #expect(await engine.lastReport?.triggers == ["launch", "periodic", "connectivityRestored"])
            #expect(await engine.startedSyncCount == 1)
        }
    }

    @Test("failures back off exponentially with jitter, keep the triggers, and the next success clears the error")
    func backoff() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            harness.remote.failNextPulls(2)
            await engine.trigger(.launch)
            await harness.sleeper.waitForSleepers(atLeast: 1)
            harness.sleeper.advance(by: .milliseconds(250))
            await harness.waitForStatus { $0.phase == .backingOff }
            #expect(engine.status.lastError?.code == .networkUnavailable)
            #expect(engine.status.lastError?.isRetryable == true)
            await harness.sleeper.waitForSleepers(atLeast: 1)
            #expect(harness.sleeper.pendingDelays == [.milliseconds(750)])
            harness.sleeper.advance(by: .milliseconds(750))
            await harness.waitForStatus { $0.phase == .backingOff && harness.remote.pullsStarted == 2 }
            await harness.sleeper.waitForSleepers(atLeast: 1)
            #expect(harness.sleeper.pendingDelays == [.milliseconds(1500)])
            harness.sleeper.advance(by: .milliseconds(1500))
            await harness.waitForCompletedSyncs(1)
            #expect(engine.status.lastError == nil)
            #expect(engine.status.lastSyncedAt != nil)
            #expect(await engine.lastReport?.triggers == ["launch"])
            #expect(await engine.startedSyncCount == 3)
        }
    }

    @Test("the pending count follows a burst of local writes to its end: the outbox is counted once more after the last one")
    func pendingCountAfterBurst() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            await harness.waitForStatus { $0.pendingCount == 0 }
            for index in 0..<40 {
                try harness.store.save(collection: "sermons", fields: ["title": .string("burst \(index)"), "date": "2026-11-01T10:00:00Z"])
            }
            await harness.waitForStatus { $0.pendingCount == 40 }
            #expect(harness.engine.status.pendingCount == 40)
        }
    }

    @Test("a local write triggers one debounced push; a burst of writes makes one push")
    func localChange() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            await harness.waitForStatus { $0.pendingCount == 0 }
            for title in ["a", "b", "c"] {
                try harness.store.save(collection: "sermons", fields: ["title": .string(title), "date": "2026-11-01T10:00:00Z"])
            }
            await harness.waitForStatus { $0.pendingCount == 3 }
            await harness.sleeper.waitForSleepers(atLeast: 1)
            #expect(harness.sleeper.pendingDelays == [.milliseconds(300)])
            harness.sleeper.advance(by: .milliseconds(300))
            await harness.waitForCompletedSyncs(1)
            #expect(harness.remote.pushCount == 1)
            #expect(harness.remote.state.withLock { $0.pushes.first?.mutations.count } == 3)
            #expect(await engine.lastReport?.pushed == 3)
            #expect(engine.status.pendingCount == 0)
        }
    }

    @Test("a realtime poke at or below the cursor is ignored; above it syncs at once, without a coalescing window")
    func realtimePoke() async throws {
        let harness = try EngineHarness()
        try harness.store.apply(PullResponse(changes: [], cursors: [harness.fixture.space: 5], hasMore: false))
        try await harness.run { harness in
            let engine = harness.engine
            await engine.trigger(.realtimePoke(space: harness.fixture.space, seq: 5))
            #expect(harness.sleeper.sleeperCount == 0)
            #expect(await engine.startedSyncCount == 0)
            await engine.trigger(.realtimePoke(space: harness.fixture.space, seq: 6))
            await harness.waitForCompletedSyncs(1)
            #expect(await engine.startedSyncCount == 1)
            #expect(harness.sleeper.sleeperCount == 0, "no coalescing timer: a poke's latency is the sync's")
        }
    }

    @Test("a burst of 1,000 pokes during a sync is one sync in flight plus one follow-up")
    func pokeBurst() async throws {
        let harness = try EngineHarness()
        try await harness.run { harness in
            let engine = harness.engine
            harness.remote.holdPulls()
            await engine.trigger(.realtimePoke(space: harness.fixture.space, seq: 1))
            await harness.remote.waitForPullsStarted(1)
            for seq in 2...1_001 { await engine.trigger(.realtimePoke(space: harness.fixture.space, seq: Int64(seq))) }
            #expect(await engine.startedSyncCount == 1)
            harness.remote.releasePulls()
            await harness.waitForCompletedSyncs(2)
            #expect(await engine.startedSyncCount == 2)
            #expect(harness.remote.pullsStarted == 2)
            #expect(await engine.lastReport?.triggers == ["realtimePoke"])
        }
    }

    @Test("the periodic trigger fires every interval")
    func periodic() async throws {
        let harness = try EngineHarness(periodic: .seconds(60))
        try await harness.run { harness in
            await harness.sleeper.waitForSleepers(atLeast: 1)
            #expect(harness.sleeper.pendingDelays == [.seconds(60)])
            harness.sleeper.advance(by: .seconds(60))
            await harness.sleeper.waitForSleepers(atLeast: 2)   // the next period and the coalescing window
            harness.sleeper.advance(by: .milliseconds(250))
            await harness.waitForCompletedSyncs(1)
            #expect(await harness.engine.lastReport?.triggers == ["periodic"])
        }
    }
}
