import FerryClient
import FerryCore
import Foundation
import Synchronization
import Testing

/// What one sync sends and applies, against a server in memory.
@Suite("SyncEngine: one sync")
struct SyncPassTests {
    func fields(_ index: Int) -> [String: JSONValue] {
        ["title": .string("Sermon \(index)"), "date": "2026-11-01T10:00:00Z"]
    }

    @Test("the whole outbox goes out in batches of at most 1000, in id order; a refused mutation never blocks the others")
    func batches() async throws {
        let harness = try EngineHarness()
        for index in 0..<1_203 { try harness.store.save(collection: "sermons", fields: fields(index)) }
        let ids = try harness.store.pendingMutations(limit: 2_000).map(\.mutationId)
        harness.remote.state.withLock { $0.rejectedIDs = [ids[3], ids[700]] }
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 1_203 && report.rejected == 2)
            #expect(report.requests == 3, "two pushes and one pull")
            let pushes = harness.remote.state.withLock { $0.pushes }
            #expect(pushes.map(\.mutations.count) == [1000, 203])
            #expect(pushes.flatMap(\.mutations).map(\.mutationId) == ids)
            #expect(pushes.allSatisfy { $0.deviceId == harness.store.deviceId })
            #expect(try harness.store.pendingCount() == 0)
            #expect(try harness.store.rejections().map(\.mutation.mutationId) == [ids[3], ids[700]])
        }
    }

    @Test("a push the server answers without a result for any of its mutations stops the sync before the next push; the outbox keeps everything")
    func notAcknowledged() async throws {
        let harness = try EngineHarness()
        for index in 0..<1_203 { try harness.store.save(collection: "sermons", fields: fields(index)) }
        harness.remote.state.withLock { $0.answersNoResults = true }
        try await harness.run { harness in
            do {
                _ = try await harness.engine.sync()
                Issue.record("the sync succeeded")
            } catch let error as SyncError {
                #expect(error.code == .pushNotAcknowledged && error.isRetryable)
            }
            #expect(harness.remote.pushCount == 1, "no further batch is sent after one the server did not acknowledge")
            #expect(try harness.store.pendingCount() == 1_203)
        }
    }

    @Test("a push the server finds too large is halved until it fits")
    func tooLarge() async throws {
        let harness = try EngineHarness()
        for index in 0..<10 { try harness.store.save(collection: "sermons", fields: fields(index)) }
        harness.remote.state.withLock { $0.maximumPushCount = 3 }
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 10 && report.rejected == 0)
            #expect(try harness.store.pendingCount() == 0)
            let sizes = harness.remote.state.withLock { $0.pushes.map(\.mutations.count) }
            #expect(sizes.prefix(3) == [10, 5, 2])
        }
    }

    @Test("pull loops while the server has more, sending the cursors each reply gave")
    func pullLoop() async throws {
        let harness = try EngineHarness()
        let space = harness.fixture.space
        let one = Change(space: space, collection: "sermons", id: UUID(), seq: 1, fields: fields(1),
                         clocks: ["title": harness.fixture.remoteClock(0), "date": harness.fixture.remoteClock(0)], deleted: false)
        var two = one
        two.id = UUID()
        two.seq = 2
        harness.remote.state.withLock { state in
            state.queuedReplies = [
                PullResponse(changes: [one], cursors: [space: 1], hasMore: true),
                PullResponse(changes: [two], cursors: [space: 2], hasMore: false),
            ]
        }
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pulled == 2 && report.applied == 2 && report.requests == 2)
            #expect(try harness.store.cursors() == [space: 2])
            let sent = harness.remote.state.withLock { $0.pulls.map(\.cursors) }
            #expect(sent == [[:], [space: 1]])
        }
    }

    @Test("resetRequired pulls the space again from 0 in the same sync, keeping the outbox")
    func reset() async throws {
        let harness = try EngineHarness()
        let space = harness.fixture.space
        try harness.store.apply(PullResponse(changes: [], cursors: [space: 50], hasMore: false))
        harness.remote.state.withLock { state in
            state.queuedReplies = [PullResponse(changes: [], cursors: [space: 50], hasMore: false, resetRequired: [space])]
            state.reply = PullResponse(changes: [], cursors: [space: 60], hasMore: false)
        }
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.resetSpaces == 1 && report.requests == 2)
            let sent = harness.remote.state.withLock { $0.pulls.map(\.cursors) }
            #expect(sent == [[space: 50], [space: 0]])
            #expect(try harness.store.cursors() == [space: 60])
        }
    }

    @Test("a pulled change in a collection the store lacks makes it fetch the server's schema, migrate, and apply")
    func schemaRefresh() async throws {
        let sermonsOnly = Schema(collections: StoreFixture.schema.collections.filter { $0.name == "sermons" || $0.isSystem })
        let harness = try EngineHarness(storeSchema: sermonsOnly)
        let space = harness.fixture.space
        let sermon = UUID()
        let clock = harness.fixture.remoteClock(0)
        harness.remote.state.withLock { state in
            state.reply = PullResponse(changes: [
                Change(space: space, collection: "sermons", id: sermon, seq: 1, fields: fields(1), clocks: ["title": clock, "date": clock], deleted: false),
                Change(space: space, collection: "notes", id: UUID(), seq: 2, fields: ["sermon_id": .string(sermon.uuidString.lowercased()), "text": "n"],
                       clocks: ["sermon_id": clock, "text": clock], deleted: false),
            ], cursors: [space: 2], hasMore: false)
        }
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.applied == 2 && report.requests == 2)
            #expect(harness.remote.state.withLock { $0.schemaRequests } == 1)
            #expect(try harness.store.children(of: "sermons", id: sermon)["notes"]?.count == 1)
        }
    }

    @Test("a space queued offline is created before the push that carries records written into it")
    func queuedSpace() async throws {
        let harness = try EngineHarness()
        let space = try harness.store.queueSpace(CreateSpaceRequest(name: "Offline church"))
        try harness.store.save(collection: "sermons", space: space, fields: fields(1))
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.requests == 3, "create the space, push, pull")
            #expect(harness.remote.state.withLock { $0.createdSpaces.map(\.id) } == [space])
            #expect(harness.remote.state.withLock { $0.pushes.first?.mutations.first?.space } == space)
            #expect(try harness.store.pendingSpaces().isEmpty)
            let again = try await harness.engine.sync()
            #expect(again.requests == 1)
        }
    }

    @Test("a space the server refuses to create is dropped, and every other space still pushes and pulls")
    func refusedSpace() async throws {
        let harness = try EngineHarness()
        let space = try harness.store.queueSpace(CreateSpaceRequest(name: "One too many", encrypted: true))
        try harness.store.save(collection: "sermons", fields: fields(1))
        let stranded = try harness.store.save(collection: "sermons", space: space, fields: fields(2))
        harness.remote.state.withLock {
            $0.spaceRefusal = RemoteError(code: .tooManySpaces, message: "The account is in 1000 spaces, the most this server allows.", status: 409)
        }
        try await harness.run { harness in
            let report = try await harness.engine.sync()
            #expect(report.pushed == 1 && harness.remote.pushCount == 1, "the other space's write went out")
            #expect(try harness.store.pendingSpaces().isEmpty, "not asked again at every sync")
            #expect(harness.remote.state.withLock { $0.createdSpaces.isEmpty } && space != harness.fixture.space)
            let rejected = try harness.store.rejections().map(\.mutation.id)
            #expect(report.rejected == 1 && rejected == [stranded.id])
            let (waiting, locked) = (try harness.store.pendingCount(), try harness.store.lockedSpaces())
            #expect(waiting == 0 && locked.isEmpty, "nothing waits for a key that cannot come")
            // A refusal that may pass (the server busy) keeps the space for the next sync.
            let later = try harness.store.queueSpace(CreateSpaceRequest(name: "Later"))
            harness.remote.state.withLock { $0.spaceRefusal = RemoteError(code: "service_unavailable", message: "Busy.", status: 503) }
            await #expect(throws: SyncError.self) { try await harness.engine.sync() }
            #expect(try harness.store.pendingSpaces().map(\.id) == [later])
        }
    }
}
