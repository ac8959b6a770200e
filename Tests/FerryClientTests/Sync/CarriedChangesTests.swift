import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Synchronization
import Testing

/// A stream whose messages the test sends one at a time; each `send` returns once the engine has handled it.
final class ScriptedStreamRemote: ForwardingSyncRemote, RealtimeRemote {
    let base: FakeSyncRemote
    private let inbox: AsyncStream<(StreamMessage, CheckedContinuation<Void, Never>)>
    private let feed: AsyncStream<(StreamMessage, CheckedContinuation<Void, Never>)>.Continuation

    init(base: FakeSyncRemote) {
        self.base = base
        (inbox, feed) = AsyncStream.makeStream()
    }

    func send(_ message: StreamMessage) async {
        await withCheckedContinuation { feed.yield((message, $0)) }
    }

    func openStream(_ onMessage: @escaping @Sendable (StreamMessage) async -> Void) async throws -> StreamClosure {
        for await (message, handled) in inbox {
            await onMessage(message)
            handled.resume()
        }
        return StreamClosure(code: 1000)
    }
}

/// The engine applies a poke's carried changes at once, without a sync, only when its cursor meets their start.
@Suite("Sync engine: changes carried in realtime pokes")
struct CarriedChangesTests {
    let fixture: StoreFixture
    let remote: ScriptedStreamRemote
    let engine: SyncEngine

    init() throws {
        fixture = try StoreFixture()
        remote = ScriptedStreamRemote(base: FakeSyncRemote(schema: StoreFixture.schema))
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        configuration.coalescingWindow = .seconds(3600)  // the stream's own catch-up sync waits: only pokes sync
        engine = SyncEngine(store: fixture.store, remote: remote, configuration: configuration)
    }

    func sermon(_ id: UUID, _ title: String, seq: Int64) -> Change {
        Change(
            space: fixture.space, collection: "sermons", id: id, seq: seq,
            fields: ["title": .string(title), "date": "2026-11-01T10:00:00.000Z"],
            clocks: ["title": fixture.remoteClock(Double(seq)), "date": fixture.remoteClock(Double(seq))], deleted: false
        )
    }

    func carried(after: Int64, _ changes: [Change], seq: Int64) -> StreamMessage {
        .change(space: fixture.space, seq: seq, carried: CarriedChanges(
            after: after, pull: PullResponse(changes: changes, cursors: [fixture.space: seq], hasMore: false)
        ))
    }

    func running(_ body: () async throws -> Void) async throws {
        let engine = self.engine
        let run = Task { try await engine.run() }
        defer { run.cancel() }
        await remote.send(.ready(expiresAt: nil))
        try await body()
    }

    @Test("changes that follow on from the cursor apply at once, without a sync; the cursor moves to their end")
    func applies() async throws {
        try fixture.store.apply(PullResponse(changes: [], cursors: [fixture.space: 5], hasMore: false))
        let id = UUID()
        try await running { () async throws in
            await remote.send(carried(after: 5, [sermon(id, "Advent 1", seq: 7)], seq: 8))
            #expect(try fixture.store.fetch(collection: "sermons", id: id)?.fields["title"] == "Advent 1")
            #expect(try fixture.store.cursors()[fixture.space] == 8)
            #expect(await engine.startedSyncCount == 0 && remote.base.pullCount == 0)
            #expect(engine.status.lastStreamedAt != nil)

            // From a cursor inside the range (a pull read part of it): applied again, harmlessly, to the end.
            await remote.send(carried(after: 7, [sermon(id, "Advent 1 (edited)", seq: 9)], seq: 9))
            #expect(try fixture.store.fetch(collection: "sermons", id: id)?.fields["title"] == "Advent 1 (edited)")
            #expect(try fixture.store.cursors()[fixture.space] == 9)
            // Already held: nothing moves back.
            await remote.send(carried(after: 2, [sermon(id, "Advent 1", seq: 7)], seq: 8))
            #expect(try fixture.store.fetch(collection: "sermons", id: id)?.fields["title"] == "Advent 1 (edited)")
            #expect(try fixture.store.cursors()[fixture.space] == 9)
            #expect(await engine.startedSyncCount == 0)
        }
    }

    @Test("a gap (a message lost before this one) applies nothing and pulls instead")
    func gapPulls() async throws {
        try fixture.store.apply(PullResponse(changes: [], cursors: [fixture.space: 5], hasMore: false))
        let id = UUID()
        try await running { () async throws in
            await remote.send(carried(after: 6, [sermon(id, "Advent 2", seq: 7)], seq: 7))
            #expect(try fixture.store.fetch(collection: "sermons", id: id) == nil)
            try await eventually("the gap did not pull") { remote.base.pullCount >= 1 }
            #expect(remote.base.state.withLock { $0.pulls.first?.cursors[fixture.space] } == 5)
        }
    }

    @Test("a space never pulled is a gap, whatever the range says: its first pull tells whether it is encrypted")
    func neverPulled() async throws {
        let id = UUID()
        try await running { () async throws in
            await remote.send(carried(after: 0, [sermon(id, "Sealed?", seq: 1)], seq: 1))
            #expect(try fixture.store.fetch(collection: "sermons", id: id) == nil)
            try await eventually("the unknown space did not pull") { remote.base.pullCount >= 1 }
        }
    }

    @Test("a page that is not one space's whole page is a poke")
    func notWhole() async throws {
        let other = UUID()
        try await running { () async throws in
            let message = StreamMessage.change(space: fixture.space, seq: 3, carried: CarriedChanges(
                after: 0, pull: PullResponse(changes: [sermon(UUID(), "x", seq: 3)], cursors: [fixture.space: 3, other: 3], hasMore: false)
            ))
            await remote.send(message)
            try await eventually("the poke did not pull") { remote.base.pullCount >= 1 }
            #expect(try fixture.store.cursors()[other] == nil)
        }
    }
}
