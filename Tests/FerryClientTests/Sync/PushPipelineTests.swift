import FerryClient
import FerryCore
import Foundation
import Synchronization
import Testing

/// Two pushes on the wire at once, each naming the one it follows, against a server in memory that checks `follows`
/// as the real one does.
@Suite("SyncEngine: pushes in flight")
struct PushPipelineTests {
    func fields(_ index: Int) -> [String: JSONValue] {
        ["title": .string("Sermon \(index)"), "date": "2026-11-01T10:00:00Z"]
    }

    func harness(writes: Int, maxInFlight: Int?) throws -> EngineHarness {
        let harness = try EngineHarness(pushBatchSize: 500)
        for index in 0..<writes { try harness.store.save(collection: "sermons", fields: fields(index)) }
        harness.remote.state.withLock { state in
            state.maxInFlight = maxInFlight
            state.pushDuration = .milliseconds(20)
        }
        return harness
    }

    @Test("once a reply allows two, the next push follows the one on the wire; every entry leaves the outbox once, in order")
    func twoInFlight() async throws {
        let harness = try harness(writes: 2_203, maxInFlight: 2)
        let ids = try harness.store.pendingMutations(limit: 3_000).map(\.mutationId)
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 2_203 && report.rejected == 0)
            let pushes = harness.remote.state.withLock { $0.pushes }
            #expect(pushes.map(\.mutations.count) == [500, 500, 500, 500, 203])
            #expect(pushes.flatMap(\.mutations).map(\.mutationId) == ids)
            let lasts = pushes.map { $0.mutations.last!.mutationId }
            // The first goes alone; the second is sent once it is answered, the third behind the second (before its
            // reply: a push is named in `follows` only while on the wire), and so on.
            #expect(pushes.map(\.follows) == [nil, nil, lasts[1], lasts[2], lasts[3]])
            #expect(try harness.store.pendingCount() == 0)
        }
    }

    @Test("a server that allows more than three still gets at most three on the wire, each following the one before")
    func atMostThree() async throws {
        let harness = try harness(writes: 3_000, maxInFlight: 5)
        harness.remote.state.withLock { $0.pushesHeldUntilOnTheWire = 3 }
        let ids = try harness.store.pendingMutations(limit: 3_000).map(\.mutationId)
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 3_000 && report.rejected == 0)
            let (pushes, most) = harness.remote.state.withLock { ($0.pushes, $0.mostPushesOnTheWire) }
            #expect(most == 3 && harness.remote.state.withLock(\.windowFilled))
            #expect(pushes.flatMap(\.mutations).map(\.mutationId) == ids)
            let lasts = pushes.map { $0.mutations.last!.mutationId }
            #expect(pushes.map(\.follows) == [nil, nil, lasts[1], lasts[2], lasts[3], lasts[4]])
            #expect(try harness.store.pendingCount() == 0)
        }
    }

    @Test("a server that does not say it takes more gets one push at a time, without follows")
    func oneAtATime() async throws {
        let harness = try harness(writes: 1_203, maxInFlight: nil)
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 1_203)
            let (pushes, most) = harness.remote.state.withLock { ($0.pushes, $0.mostPushesOnTheWire) }
            #expect(pushes.count == 3 && pushes.allSatisfy { $0.follows == nil })
            #expect(most == 1)
        }
    }

    @Test("a push refused push_out_of_order (it arrived before its predecessor) is sent again and lands once")
    func outOfOrderSentAgain() async throws {
        let harness = try harness(writes: 2_000, maxInFlight: 2)
        harness.remote.state.withLock { $0.overtakingPushes = [3] }
        let ids = try harness.store.pendingMutations(limit: 3_000).map(\.mutationId)
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 2_000 && report.rejected == 0)
            let pushes = harness.remote.state.withLock { $0.pushes }
            // Push 3 was refused, so push 4 (behind it) was refused too; both went again.
            let landed = pushes.enumerated().filter { ![3, 4].contains($0.offset + 1) }.flatMap(\.element.mutations).map(\.mutationId)
            #expect(landed == ids, "each entry landed once, in order")
            #expect(pushes[4].mutations.map(\.mutationId) == pushes[2].mutations.map(\.mutationId) && pushes[4].follows == nil)
            #expect(try harness.store.pendingCount() == 0)
        }
    }

    @Test("when a push fails, the one behind it is awaited and dropped: the sync fails, the outbox keeps both, the next sync sends them")
    func failureBehind() async throws {
        let harness = try harness(writes: 2_000, maxInFlight: 2)
        harness.remote.state.withLock { $0.failingPushes = [2] }
        try await harness.run { harness in
            await #expect(throws: (any Error).self) { _ = try await harness.engine.sync() }
            #expect(harness.engine.status.lastError?.code == .networkUnavailable)
            let (pushes, wire) = harness.remote.state.withLock { ($0.pushes, $0.pushesOnTheWire) }
            #expect(wire == 0, "no push of the failed sync is left on the wire")
            #expect(pushes.count == 3, "the push sent behind the failed one was refused (it follows a push that never committed)")
            #expect(try harness.store.pendingCount() == 1_500, "only the first push was acknowledged")
            let report = try await harness.engine.sync()
            #expect(report.pushed == 1_500)
            #expect(try harness.store.pendingCount() == 0)
        }
    }

    @Test("a server already past the reply's batch (a restored store) keeps the device at one push at a time")
    func serverAhead() async throws {
        let harness = try harness(writes: 1_500, maxInFlight: 2)
        harness.remote.state.withLock { $0.lastProcessed = 1_000_000 }
        try await harness.run { harness in
            _ = try await harness.engine.sync()
            let pushes = harness.remote.state.withLock { $0.pushes }
            #expect(pushes.count == 3 && pushes.allSatisfy { $0.follows == nil })
        }
    }
}
