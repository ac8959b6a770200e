import FerryClient
import FerryCore
import Foundation
import Observation
import Synchronization
import Testing

@Suite("FerryQuery: a live query on the main actor")
@MainActor
struct FerryQueryTests {
    typealias Sermon = SyncedRecordTests.Sermon

    static let date = Date(timeIntervalSince1970: 1_790_000_000)

    static func sermon(_ title: String, speaker: String? = nil) -> Sermon {
        Sermon(id: UUID(), title: title, date: date, speaker: speaker)
    }

    /// A sermon as another device wrote it, arriving in a pull.
    static func pulled(_ fixture: StoreFixture, id: UUID, title: String, seq: Int64) -> PullResponse {
        let fields: [String: JSONValue] = ["title": .string(title), "date": "2026-11-01T10:00:00.000Z"]
        let change = Change(
            space: fixture.space, collection: Sermon.collection, id: id, seq: seq, fields: fields,
            clocks: fields.mapValues { _ in fixture.remoteClock(60 + TimeInterval(seq)) }, deleted: false
        )
        return PullResponse(changes: [change], cursors: [fixture.space: seq], hasMore: false)
    }

    @Test("every local write (create, edit, delete) changes records: onChange fires and the new value holds the write")
    func localWrites() async throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let query = FerryQuery<Sermon>(store: store)
        #expect(await waitUntil { query.isLoaded })
        #expect(query.records.isEmpty)
        #expect(query.error == nil)

        var saved: [Sermon] = []
        for title in ["Advent", "Easter", "Pentecost"] {
            let changed = trackChanges { query.records }
            let sermon = Self.sermon(title)
            try store.save(sermon)
            saved.append(sermon)
            #expect(await waitUntil { changed.hasFired && query.records.contains(sermon) }, "\(title) was observed")
        }

        var edited = saved[0]
        edited.title = "Advent, edited"
        let editChanged = trackChanges { query.records }
        try store.save(edited)
        #expect(await waitUntil { editChanged.hasFired && query.records.contains(edited) })

        let deleteChanged = trackChanges { query.records }
        try store.delete(saved[1])
        #expect(await waitUntil { deleteChanged.hasFired && !query.records.contains { $0.id == saved[1].id } })
        #expect(Set(query.records.map(\.id)) == [saved[0].id, saved[2].id])
    }

    @Test("a change applied from a pull (the engine's apply path) changes records like a local write")
    func pulledChange() async throws {
        let fixture = try StoreFixture()
        let query = FerryQuery<Sermon>(store: fixture.store)
        #expect(await waitUntil { query.isLoaded })

        let id = UUID()
        let created = trackChanges { query.records }
        try fixture.store.apply(Self.pulled(fixture, id: id, title: "From the tablet", seq: 1))
        #expect(await waitUntil { created.hasFired && query.records.map(\.title) == ["From the tablet"] })

        let renamed = trackChanges { query.records }
        try fixture.store.apply(Self.pulled(fixture, id: id, title: "Renamed on the tablet", seq: 2))
        #expect(await waitUntil { renamed.hasFired && query.records.map(\.title) == ["Renamed on the tablet"] })
        #expect(query.records.first?.id == id)
    }

    @Test("a change the sync engine pulls from the server changes records")
    func pulledBySync() async throws {
        let harness = try EngineHarness()
        let query = FerryQuery<Sermon>(store: harness.store)
        #expect(await waitUntil { query.isLoaded })
        let id = UUID()
        let reply = Self.pulled(harness.fixture, id: id, title: "Synced", seq: 1)
        harness.remote.state.withLock { $0.reply = reply }

        let changed = trackChanges { query.records }
        try await harness.run { harness in
            _ = try await harness.engine.sync()
        }
        #expect(await waitUntil { changed.hasFired && query.records.map(\.id) == [id] })
    }

    @Test("the filter selects records; setting another filter notifies, restarts, and reloads")
    func filter() async throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let john = Self.sermon("Grace", speaker: "John")
        let mary = Self.sermon("Hope", speaker: "Mary")
        try store.save(john)
        try store.save(mary)
        let query = FerryQuery<Sermon>(store: store, where: ["speaker": "John"])
        #expect(await waitUntil { query.isLoaded })
        #expect(query.records == [john])

        let johnAgain = Self.sermon("Faith", speaker: "John")
        let changed = trackChanges { query.records }
        try store.save(johnAgain)
        #expect(await waitUntil { changed.hasFired && Set(query.records.map(\.id)) == [john.id, johnAgain.id] })

        let filterChanged = trackChanges { query.filter }
        let recordsChanged = trackChanges { query.records }
        query.filter = ["speaker": "Mary"]
        #expect(filterChanged.hasFired, "setting the filter notifies at once")
        #expect(!query.isLoaded, "not loaded until the new filter's first value arrives")
        #expect(await waitUntil { recordsChanged.hasFired && query.isLoaded })
        #expect(query.records == [mary])
    }

    @Test("a filter the store refuses sets error at once; a good filter clears it")
    func badFilter() async throws {
        let fixture = try StoreFixture()
        try fixture.store.save(Self.sermon("Grace"))
        let query = FerryQuery<Sermon>(store: fixture.store, where: ["colour": "red"])
        #expect((query.error as? StoreError)?.code == .unknownField)
        #expect(!query.isLoaded)

        query.filter = [:]
        #expect(await waitUntil { query.isLoaded })
        #expect(query.error == nil)
        #expect(query.records.map(\.title) == ["Grace"])
    }

    @Test("records follow the sort closure, a Foundation comparator, or id order without either; changing the sort re-sorts")
    func sort() async throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        for title in ["Charlie", "Alpha", "Bravo"] {
            try store.save(Self.sermon(title))
        }
        let query = FerryQuery<Sermon>(store: store) { $0.title < $1.title }
        #expect(await waitUntil { query.isLoaded })
        #expect(query.records.map(\.title) == ["Alpha", "Bravo", "Charlie"])

        let changed = trackChanges { query.records }
        try store.save(Self.sermon("Aardvark"))
        #expect(await waitUntil { changed.hasFired && query.records.map(\.title) == ["Aardvark", "Alpha", "Bravo", "Charlie"] })

        query.sort = { $0.title > $1.title }
        #expect(await waitUntil { query.isLoaded && query.records.map(\.title) == ["Charlie", "Bravo", "Alpha", "Aardvark"] })

        query.sort = nil
        #expect(await waitUntil { query.isLoaded && query.records.count == 4 })
        let ids = query.records.map { $0.id.uuidString.lowercased() }
        #expect(ids == ids.sorted(), "the store's id order")

        let comparator = FerryQuery<Sermon>(store: store, sortedBy: KeyPathComparator(\Sermon.title, order: .reverse))
        #expect(await waitUntil { comparator.isLoaded })
        #expect(comparator.records.map(\.title) == ["Charlie", "Bravo", "Alpha", "Aardvark"])
    }

    @Test("a burst of writes ends with records holding every one: the last value is never dropped")
    func burst() async throws {
        let fixture = try StoreFixture()
        let query = FerryQuery<Sermon>(store: fixture.store)
        #expect(await waitUntil { query.isLoaded })
        // No suspension between the writes: the query's task cannot run until the last one has committed.
        var ids: Set<UUID> = []
        for index in 0..<50 {
            let sermon = Self.sermon("Sermon \(index)")
            try fixture.store.save(sermon)
            ids.insert(sermon.id)
        }
        #expect(await waitUntil { Set(query.records.map(\.id)) == ids })
    }

    @Test("stop() freezes records; start() catches up with what changed meanwhile")
    func stopAndStart() async throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let query = FerryQuery<Sermon>(store: store)
        #expect(await waitUntil { query.isLoaded })
        query.stop()

        let sermon = Self.sermon("While stopped")
        try store.save(sermon)
        // A second query sees the write; by then a query still observing would have seen it too.
        let witness = FerryQuery<Sermon>(store: store)
        #expect(await waitUntil { witness.records.contains(sermon) })
        #expect(query.records.isEmpty, "a stopped query keeps its last records")

        query.start()
        #expect(await waitUntil { query.records.contains(sermon) })
    }

    @Test("releasing the query releases it at once: its task holds it weakly and is cancelled")
    func release() async throws {
        let fixture = try StoreFixture()
        var query: FerryQuery<Sermon>? = FerryQuery<Sermon>(store: fixture.store)
        #expect(await waitUntil { query?.isLoaded == true })
        weak let released = query
        query = nil
        #expect(released == nil)
    }
}

// MARK: - Waiting for observed changes (SyncStatusModelTests uses these too)

/// Whether a `withObservationTracking` `onChange` has fired (Observation calls it from whatever context mutates).
final class ChangeFlag: Sendable {
    private let fired = Mutex(false)

    var hasFired: Bool { fired.withLock { $0 } }

    func fire() {
        fired.withLock { $0 = true }
    }
}

/// Tracks what `read` reads, once: the flag turns on at the next change to any of it (Observation fires before the
/// new value is stored, on the main actor for these models, so once a poll sees the flag the value is in place).
@MainActor
func trackChanges<Value>(_ read: () -> Value) -> ChangeFlag {
    let flag = ChangeFlag()
    withObservationTracking {
        _ = read()
    } onChange: {
        flag.fire()
    }
    return flag
}

/// Polls `condition` on the main actor every few milliseconds, letting the models' tasks run in between, until it
/// holds; `false` when `timeout` passes first. The timeout catches a hang, not slowness: a full run on 2 cores is many
/// times slower than one test alone.
@MainActor
func waitUntil(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
