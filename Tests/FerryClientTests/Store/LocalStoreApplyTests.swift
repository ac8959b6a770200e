import FerryClient
import FerryCore
import FerryTesting
import Foundation
import GRDB
import Testing

@Suite("LocalStore: applying pulled changes")
struct LocalStoreApplyTests {
    func change(
        _ fixture: StoreFixture, _ collection: String, _ id: UUID, seq: Int64, _ fields: [String: JSONValue], at offset: TimeInterval,
        deleted: Bool = false, space: UUID? = nil
    ) -> Change {
        var clocks = fields.mapValues { _ in fixture.remoteClock(offset) }
        if deleted { clocks["_deleted"] = fixture.remoteClock(offset) }
        return Change(space: space ?? fixture.space, collection: collection, id: id, seq: seq, fields: fields, clocks: clocks, deleted: deleted)
    }

    @Test("one generic path applies a parent and its children (the sermon app: notes, transcript and summary arrive on update too)", arguments: StoreKind.allCases)
    func childrenApplied(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = UUID(), note = UUID(), transcript = UUID()
        let parent: JSONValue = .string(sermon.uuidString.lowercased())
        let first = PullResponse(changes: [
            change(fixture, "sermons", sermon, seq: 1, StoreFixture.sermonFields.merging(["transcription_status": "processing"]) { $1 }, at: -60),
            change(fixture, "notes", note, seq: 2, ["sermon_id": parent, "text": "Key point", "timestamp": 120.5], at: -60),
        ], cursors: [fixture.space: 2], hasMore: false)
        #expect(try store.apply(first).applied == 2)

        // The sermon was updated elsewhere: its transcript now exists and the note was edited.
        let second = PullResponse(changes: [
            change(fixture, "sermons", sermon, seq: 3, ["transcription_status": "complete"], at: -30),
            change(fixture, "transcripts", transcript, seq: 4, ["sermon_id": parent, "text": "Full text", "segments": .array([.object(["start": 0, "text": "Full"])])], at: -30),
            change(fixture, "notes", note, seq: 5, ["text": "Key point, edited"], at: -30),
        ], cursors: [fixture.space: 5], hasMore: false)
        #expect(try store.apply(second).applied == 3)
        let children = try store.children(of: "sermons", id: sermon)
        #expect(children["notes"]?.first?.fields["text"] == "Key point, edited")
        #expect(children["notes"]?.first?.fields["timestamp"] == .number(120.5))
        #expect(children["transcripts"]?.first?.fields["segments"] == .array([.object(["start": 0, "text": "Full"])]))
        #expect(try store.fetch(collection: "sermons", id: sermon)?.fields["transcription_status"] == "complete")
        #expect(try store.cursors() == [fixture.space: 5])
        #expect(try store.pendingCount() == 0, "applying pulled changes queues nothing")

        // The same reply again changes nothing: records processed = records changed.
        #expect(try store.apply(second).applied == 0)
    }

    @Test("merge is per field: the later clock wins each field, and equal updatedAt cannot drop an update", arguments: StoreKind.allCases)
    func perFieldMerge(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let id = UUID()
        try store.apply(PullResponse(changes: [
            change(fixture, "sermons", id, seq: 1, ["title": "A", "date": "2026-11-01T10:00:00.000Z", "speaker": "John"], at: -100),
        ], cursors: [fixture.space: 1], hasMore: false))
        var edit = change(fixture, "sermons", id, seq: 2, ["title": "B", "speaker": "Old"], at: -50)
        edit.clocks["speaker"] = fixture.remoteClock(-200)   // older than the stored speaker: loses
        #expect(try store.apply(PullResponse(changes: [edit], cursors: [fixture.space: 2], hasMore: false)).applied == 1)
        let record = try #require(try store.fetch(collection: "sermons", id: id))
        #expect(record.fields["title"] == "B")
        #expect(record.fields["speaker"] == "John")
        #expect(record.seq == 2)
    }

    @Test("a pending local edit survives a pull of an older remote edit; newer remote fields still merge in", arguments: StoreKind.allCases)
    func pendingEditSurvives(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        try store.save(collection: "sermons", id: sermon.id, fields: ["title": "Local title"])
        let remote = change(fixture, "sermons", sermon.id, seq: 7, ["title": "Remote title", "speaker": "Pastor John"], at: -10)
        var newer = remote
        newer.clocks["speaker"] = fixture.remoteClock(+10)
        #expect(try store.apply(PullResponse(changes: [newer], cursors: [fixture.space: 7], hasMore: false)).applied == 1)
        let record = try #require(try store.fetch(collection: "sermons", id: sermon.id))
        #expect(record.fields["title"] == "Local title")
        #expect(record.fields["speaker"] == "Pastor John")
        #expect(record.syncState == .pending)
        #expect(try store.pendingCount() == 2, "the outbox is untouched by a pull")

        // Every pulled clock is observed: the next local write is later than the remote one.
        let next = try store.save(collection: "sermons", id: sermon.id, fields: ["speaker": "Me"])
        #expect(next.clocks["speaker"]! > fixture.remoteClock(+10))
    }

    @Test("a pulled tombstone of a parent tombstones local children; a later explicit undelete restores the record", arguments: StoreKind.allCases)
    func pulledDelete(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = UUID(), note = UUID()
        try store.apply(PullResponse(changes: [
            change(fixture, "sermons", sermon, seq: 1, StoreFixture.sermonFields, at: -100),
            change(fixture, "notes", note, seq: 2, ["sermon_id": .string(sermon.uuidString.lowercased()), "text": "n"], at: -100),
        ], cursors: [fixture.space: 2], hasMore: false))
        try store.apply(PullResponse(changes: [change(fixture, "sermons", sermon, seq: 3, [:], at: -50, deleted: true)], cursors: [fixture.space: 3], hasMore: false))
        #expect(try store.fetch(collection: "sermons", id: sermon) == nil)
        #expect(try store.fetch(collection: "notes", id: note) == nil)
        // An edit older than the delete does not undelete; a later explicit undelete does.
        try store.apply(PullResponse(changes: [change(fixture, "sermons", sermon, seq: 4, ["title": "late edit"], at: -60)], cursors: [fixture.space: 4], hasMore: false))
        #expect(try store.fetch(collection: "sermons", id: sermon) == nil)
        var undelete = change(fixture, "sermons", sermon, seq: 5, ["title": "back"], at: -20)
        undelete.clocks["_deleted"] = fixture.remoteClock(-20)
        try store.apply(PullResponse(changes: [undelete], cursors: [fixture.space: 5], hasMore: false))
        #expect(try store.fetch(collection: "sermons", id: sermon)?.fields["title"] == "back")
    }

    @Test("a pulled row that collides with a local unsent one on a unique key still applies (the server refuses the local one)", arguments: StoreKind.allCases)
    func uniqueKeysAreTheServers(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let parent: JSONValue = .string(sermon.id.uuidString.lowercased())
        try store.save(collection: "transcripts", fields: ["sermon_id": parent, "text": "mine"])
        let theirs = UUID()
        let applied = try store.apply(PullResponse(changes: [
            change(fixture, "transcripts", theirs, seq: 1, ["sermon_id": parent, "text": "theirs"], at: -5),
        ], cursors: [fixture.space: 1], hasMore: false))
        #expect(applied.applied == 1)
        #expect(try store.fetch(collection: "transcripts", id: theirs)?.fields["text"] == "theirs")
    }

    @Test("a local cascade is provisional: the server's tombstone confirms a child; an undelete that beat the delete brings it back",
          arguments: StoreKind.allCases)
    func provisionalCascade(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = UUID(), kept = UUID(), confirmed = UUID()
        let parent: JSONValue = .string(sermon.uuidString.lowercased())
        try store.apply(PullResponse(changes: [
            change(fixture, "sermons", sermon, seq: 1, StoreFixture.sermonFields, at: -100),
            change(fixture, "notes", kept, seq: 2, ["sermon_id": parent, "text": "kept"], at: -100),
            change(fixture, "notes", confirmed, seq: 3, ["sermon_id": parent, "text": "confirmed"], at: -100),
        ], cursors: [fixture.space: 3], hasMore: false))
        try store.delete(collection: "sermons", id: sermon)
        #expect(try store.children(of: "sermons", id: sermon).isEmpty)

        // The server tombstoned one child (its cascade) before another device's later undelete of the sermon won.
        var tombstone = change(fixture, "notes", confirmed, seq: 4, [:], at: -100, deleted: true)
        tombstone.clocks = ["_deleted": fixture.remoteClock(+1, node: "server")]
        var undelete = change(fixture, "sermons", sermon, seq: 5, ["speaker": "back"], at: +3600)
        undelete.clocks["_deleted"] = fixture.remoteClock(+3600)
        try store.apply(PullResponse(changes: [tombstone, undelete], cursors: [fixture.space: 5], hasMore: false))
        #expect(try store.fetch(collection: "sermons", id: sermon)?.fields["speaker"] == "back")
        #expect(try store.fetch(collection: "notes", id: kept)?.fields["text"] == "kept", "the server never deleted it")
        #expect(try store.fetch(collection: "notes", id: confirmed) == nil, "the server's tombstone stands")
    }

    @Test("resetRequired drops the space's synced rows, keeps pending ones and the outbox, and restarts its cursor at 0", arguments: StoreKind.allCases)
    func resetRequired(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let other = UUID()
        let synced = UUID(), elsewhere = UUID()
        try store.apply(PullResponse(changes: [
            change(fixture, "sermons", synced, seq: 4, StoreFixture.sermonFields, at: -100),
            change(fixture, "sermons", elsewhere, seq: 9, StoreFixture.sermonFields, at: -100, space: other),
        ], cursors: [fixture.space: 4, other: 9], hasMore: false))
        let pending = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let outbox = try store.pendingMutations()

        let outcome = try store.apply(PullResponse(changes: [], cursors: [fixture.space: 40, other: 9], hasMore: false, resetRequired: [fixture.space]))
        #expect(outcome.reset == [fixture.space])
        #expect(try store.fetch(collection: "sermons", id: synced) == nil)
        #expect(try store.fetch(collection: "sermons", id: pending.id) != nil)
        #expect(try store.fetch(collection: "sermons", id: elsewhere) != nil, "other spaces are untouched")
        #expect(try store.cursors() == [fixture.space: 0, other: 9])
        #expect(try store.pendingMutations() == outbox)
    }

    @Test("a page never moves a cursor back (a realtime poke's changes may have moved it past the page); a reset does", arguments: StoreKind.allCases)
    func cursorNeverBack(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        try store.apply(PullResponse(changes: [], cursors: [fixture.space: 9], hasMore: false))
        try store.apply(PullResponse(changes: [], cursors: [fixture.space: 7], hasMore: false))
        #expect(try store.cursors()[fixture.space] == 9)
        try store.apply(PullResponse(changes: [], cursors: [fixture.space: 12], hasMore: false))
        #expect(try store.cursors()[fixture.space] == 12)
        try store.apply(PullResponse(changes: [], cursors: [fixture.space: 4], hasMore: false, resetRequired: [fixture.space]))
        #expect(try store.cursors()[fixture.space] == 0)
    }

    @Test("a change in a collection the device does not know is refused whole, leaving cursors where they were", arguments: StoreKind.allCases)
    func schemaOutdated(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let response = PullResponse(changes: [
            change(fixture, "sermons", UUID(), seq: 1, StoreFixture.sermonFields, at: -1),
            change(fixture, "podcasts", UUID(), seq: 2, ["title": "x"], at: -1),
        ], cursors: [fixture.space: 2], hasMore: false)
        #expect(throws: StoreError.self) { try store.apply(response) }
        #expect(try store.cursors().isEmpty)
        #expect(try store.fetchAll(collection: "sermons").isEmpty)
    }

    @Test("doctor finds a healthy store healthy and a bad cursor bad; resetAndResync keeps the outbox", arguments: StoreKind.allCases)
    func health(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        try store.apply(PullResponse(changes: [change(fixture, "sermons", UUID(), seq: 3, StoreFixture.sermonFields, at: -1)], cursors: [fixture.space: 3], hasMore: false))
        try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let healthy = try store.doctor()
        #expect(healthy.isHealthy, "\(healthy.problems)")
        #expect(healthy.pendingCount == 1 && healthy.spaceCount == 1)

        // A cursor damaged outside the store's own code (a pull never moves one back).
        try store.writer.write { try $0.execute(sql: "UPDATE ferry_cursors SET seq = -1") }
        #expect(try store.doctor().problems.map(\.code).sorted() == ["cursor_behind_rows", "negative_cursor"])
        try store.resetAndResync()
        #expect(try store.doctor().isHealthy)
        #expect(try store.cursors().isEmpty)
        #expect(try store.pendingCount() == 1)
        #expect(try store.fetchAll(collection: "sermons").count == 1, "only the row with a pending edit is kept")
    }

    @Test("a new record keeps its clocks as the text they came in (compact, or PostgreSQL's spaced jsonb); a repeated key is written again")
    func clocksStoredAsSent() throws {
        let fixture = try StoreFixture(kind: .file)
        let clock = fixture.remoteClock(-60)
        let (spaced, repeated) = (UUID(), UUID())
        let reply = """
            {"changes":[
              {"clocks":{"text": "\(clock)", "sermon_id": "\(clock)"},"collection":"notes","deleted":false,
               "fields":{"sermon_id":"\(UUID().lowercasedText)","text":"as sent"},"id":"\(spaced.lowercasedText)","seq":1,"space":"\(fixture.space.lowercasedText)"},
              {"clocks":{"text":"\(fixture.remoteClock(-90))","text":"\(clock)"},"collection":"notes","deleted":false,
               "fields":{"text":"repeated"},"id":"\(repeated.lowercasedText)","seq":2,"space":"\(fixture.space.lowercasedText)"}
            ],"cursors":{"\(fixture.space.lowercasedText)":2},"hasMore":false}
            """
        let response = try JSONValueDecoder().decode(PullResponse.self, from: Data(reply.utf8))
        #expect(try fixture.store.apply(response).applied == 2)
        let stored = try fixture.store.writer.read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, _clocks FROM notes").map { ($0["id"] as String, $0["_clocks"] as String) })
        }
        #expect(stored[spaced.lowercasedText] == #"{"text": "\#(clock)", "sermon_id": "\#(clock)"}"#)
        #expect(try fixture.store.fetch(collection: "notes", id: spaced)?.clocks == ["text": clock, "sermon_id": clock])
        #expect(stored[repeated.lowercasedText] == ClockMap.text(["text": clock]), "the last value wins, as the parser read it, and is written anew")
        #expect(try fixture.store.fetch(collection: "notes", id: repeated)?.clocks == ["text": clock])
    }
}
