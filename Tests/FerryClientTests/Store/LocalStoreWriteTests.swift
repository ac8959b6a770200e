import FerryClient
import FerryCore
import FerryTesting
import Foundation
import GRDB
import Testing

@Suite("LocalStore: local writes and the outbox")
struct LocalStoreWriteTests {
    @Test("a write applies at once and joins the outbox in the same transaction, with one clock per written field", arguments: StoreKind.allCases)
    func writeAndOutbox(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let stored = try #require(try store.fetch(collection: "sermons", id: sermon.id))
        #expect(stored.fields["title"] == "Sunday Service")
        #expect(stored.space == fixture.space)
        #expect(stored.syncState == .pending)
        let outbox = try store.pendingMutations()
        #expect(outbox.count == 1)
        let mutation = try #require(outbox.first)
        #expect(mutation.op == .upsert && mutation.id == sermon.id && mutation.space == fixture.space)
        #expect(Set(mutation.clocks.keys) == ["title", "date"])
        #expect(mutation.clocks["title"]?.node == store.node)
        #expect(mutation.clocks["title"] == stored.clocks["title"])

        // Unchanged values get no new clock and no outbox entry; a changed one gets a later clock.
        try store.save(collection: "sermons", id: sermon.id, fields: ["title": "Sunday Service"])
        #expect(try store.pendingCount() == 1)
        try store.save(collection: "sermons", id: sermon.id, fields: ["title": "Evening Service"])
        let second = try #require(try store.pendingMutations().last)
        #expect(second.fields == ["title": "Evening Service"])
        #expect(second.clocks["title"]! > mutation.clocks["title"]!)
        #expect(second.mutationId > mutation.mutationId)
    }

    @Test("bad input is refused with a stable code and changes nothing", arguments: StoreKind.allCases)
    func refusals(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        func code(_ body: () throws -> Void) -> ErrorCode? {
            do { try body() } catch let error as StoreError { return error.code } catch { return nil }
            return nil
        }
        #expect(code { try store.save(collection: "nope", fields: [:]) } == .unknownCollection)
        #expect(code { try store.save(collection: "sermons", fields: StoreFixture.sermonFields.merging(["colour": "red"]) { $1 }) } == .unknownField)
        #expect(code { try store.save(collection: "sermons", fields: StoreFixture.sermonFields.merging(["duration": "long"]) { $1 }) } == .typeMismatch)
        #expect(code { try store.save(collection: "sermons", fields: ["title": "No date"]) } == .missingField)
        #expect(code { try store.save(collection: "notes", fields: ["sermon_id": .string(UUID().uuidString), "text": "orphan"]) } == .parentMissing)
        #expect(code { try store.delete(collection: "sermons", id: UUID()) } == .recordNotFound)
        let sermon = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        #expect(code { try store.save(collection: "sermons", id: sermon.id, space: UUID(), fields: ["title": "moved"]) } == .spaceMismatch)
        #expect(code { try store.save(collection: "notes", space: UUID(), fields: ["sermon_id": .string(sermon.id.uuidString), "text": "elsewhere"]) } == .spaceMismatch)
        #expect(try store.pendingCount() == 1)
        #expect(try store.fetchAll(collection: "sermons").count == 1)
        // A save may not empty a required field of a live record (the server refuses it), a parent link included.
        #expect(code { try store.save(collection: "sermons", id: sermon.id, fields: ["title": .null]) } == .missingField)
        let note = try store.save(collection: "notes", fields: ["sermon_id": .string(sermon.id.uuidString), "text": "kept"])
        #expect(code { try store.save(collection: "notes", id: note.id, fields: ["sermon_id": .null]) } == .missingField)
        _ = try store.save(collection: "sermons", id: sermon.id, fields: ["title": "Renamed", "speaker": .null])
        #expect(try store.fetchAll(collection: "sermons").first?.fields["title"] == "Renamed")
        let noDefault = try LocalStore.inMemory(schema: StoreFixture.schema)
        #expect(code { try noDefault.save(collection: "sermons", fields: StoreFixture.sermonFields) } == .noSpace)
    }

    @Test("deleting a parent hides its children locally at once, and pushes only the parent's delete", arguments: StoreKind.allCases)
    func cascadeDelete(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let sermon = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let parent: JSONValue = .string(sermon.id.uuidString)
        let note = try store.save(collection: "notes", fields: ["sermon_id": parent, "text": "Key point", "timestamp": 120.5])
        let transcript = try store.save(collection: "transcripts", fields: ["sermon_id": parent, "text": "In the beginning"])
        #expect(try store.children(of: "sermons", id: sermon.id).keys.sorted() == ["notes", "transcripts"])

        try store.delete(collection: "sermons", id: sermon.id)
        #expect(try store.fetch(collection: "sermons", id: sermon.id) == nil)
        #expect(try store.fetch(collection: "notes", id: note.id) == nil)
        let deletedNote = try #require(try store.fetch(collection: "notes", id: note.id, includeDeleted: true))
        let deletedSermon = try #require(try store.fetch(collection: "sermons", id: sermon.id, includeDeleted: true))
        #expect(deletedNote.isDeleted)
        #expect(deletedSermon.clocks["_deleted"] != nil)
        #expect(deletedNote.clocks["_deleted"] == nil, "hidden until the server's own tombstone confirms it")
        #expect(try store.fetch(collection: "transcripts", id: transcript.id) == nil)
        #expect(try store.children(of: "sermons", id: sermon.id).isEmpty)
        let deletes = try store.pendingMutations().filter { $0.op == .delete }
        #expect(deletes.map(\.id) == [sermon.id])

        // Writing to the deleted record is an explicit undelete, carrying a `_deleted` clock.
        try store.save(collection: "sermons", id: sermon.id, fields: ["title": "Restored"])
        #expect(try store.fetch(collection: "sermons", id: sermon.id)?.fields["title"] == "Restored")
        #expect(try store.pendingMutations().last?.clocks["_deleted"] != nil)
    }

    @Test("the server's answer: applied and duplicate leave the outbox, rejected ones move to rejections and never return", arguments: StoreKind.allCases)
    func acknowledge(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        for title in ["one", "two", "three"] {
            try store.save(collection: "sermons", fields: ["title": .string(title), "date": "2026-11-01T10:00:00Z"])
        }
        let batch = try store.pendingMutations()
        let response = PushResponse(results: [
            MutationResult(mutationId: batch[0].mutationId, status: .applied),
            MutationResult(mutationId: batch[1].mutationId, status: .rejected, code: "forbidden_space", message: "You may not write this space."),
        ], lastMutationId: batch[1].mutationId)
        let acknowledgement = try store.acknowledge(response, for: batch)
        #expect(acknowledgement.acknowledged == 1 && acknowledgement.rejected == 1)
        #expect(try store.pendingMutations().map(\.mutationId) == [batch[2].mutationId], "an entry without a result stays")
        let rejections = try store.rejections()
        #expect(rejections.map(\.code) == ["forbidden_space"])
        #expect(try store.fetch(collection: "sermons", id: batch[1].id)?.syncState == .rejected(code: "forbidden_space", message: "You may not write this space."))
        #expect(try store.fetch(collection: "sermons", id: batch[0].id)?.syncState == .synced)
        try store.dismissRejections()
        #expect(try store.rejections().isEmpty)
    }

    @Test("a push reads the outbox as the texts it keeps: the same mutations, written as stored; a damaged entry is refused", arguments: StoreKind.allCases)
    func pushableMutations(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let record = try store.save(collection: "sermons", fields: ["title": "Psalm 23", "date": "2026-11-01T10:00:00Z"])
        try store.delete(collection: "sermons", id: record.id)
        let pending = try store.pendingMutations()
        let pushable = try store.pushableMutations(limit: 10, after: 0, through: .max)
        #expect(pushable == pending && pushable.map(\.state) == pending.map(\.state))
        #expect(pushable.allSatisfy { $0.storedJSON != nil } && pending.allSatisfy { $0.storedJSON == nil })
        let rows = try store.writer.read { db in try Row.fetchAll(db, sql: "SELECT fields, clocks FROM ferry_outbox ORDER BY mutation_id") }
        #expect(pushable.map { [$0.storedJSON?.fields, $0.storedJSON?.clocks] } == rows.map { [$0["fields"], $0["clocks"]] })
        #expect(try store.pushableMutations(limit: 1, after: pending[0].mutationId, through: .max) == [pending[1]])

        try store.writer.write { db in try db.execute(sql: "UPDATE ferry_outbox SET clocks = 'torn' WHERE mutation_id = ?", arguments: [pending[1].mutationId]) }
        #expect(throws: StoreError.self) { try store.pushableMutations(limit: 10, after: 0, through: .max) }
        #expect(try store.pushableMutations(limit: 1, after: 0, through: .max) == [pending[0]], "entries before it still go")
    }

    @Test("an acknowledgement counts each entry once: a result named twice, or for an entry already gone, changes nothing", arguments: StoreKind.allCases)
    func acknowledgeRepeatedResults(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        for title in ["one", "two", "three"] {
            try store.save(collection: "sermons", fields: ["title": .string(title), "date": "2026-11-01T10:00:00Z"])
        }
        let batch = try store.pendingMutations()
        let first = try store.acknowledge(PushResponse(results: [
            MutationResult(mutationId: batch[0].mutationId, status: .applied),
            MutationResult(mutationId: batch[0].mutationId, status: .rejected, code: "forbidden_space", message: "No."),
            MutationResult(mutationId: batch[2].mutationId, status: .duplicate),
            MutationResult(mutationId: 9_999, status: .applied),
        ], lastMutationId: batch[2].mutationId), for: batch)
        #expect(first.acknowledged == 2 && first.rejected == 0)
        #expect(try store.rejections().isEmpty)
        #expect(try store.pendingMutations().map(\.mutationId) == [batch[1].mutationId])
        let again = try store.acknowledge(PushResponse(results: [
            MutationResult(mutationId: batch[0].mutationId, status: .applied),
            MutationResult(mutationId: batch[1].mutationId, status: .applied),
        ], lastMutationId: batch[2].mutationId), for: batch)
        #expect(again.acknowledged == 1, "the entry acknowledged before is not counted again")
        #expect(try store.pendingCount() == 0 && !store.hasPendingMutations())
    }

    @Test("a refusal for want of an encrypted space's key keeps the change: back at the end of the outbox, its space locked", arguments: StoreKind.allCases)
    func deferredForKey(_ kind: StoreKind) throws {
        let fixture = try StoreFixture(kind: kind)
        let store = fixture.store
        let first = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let batch = try store.pendingMutations()
        let response = PushResponse(results: [
            MutationResult(mutationId: batch[0].mutationId, status: .rejected, code: "encryption_required", message: "Space is end-to-end encrypted."),
            MutationResult(mutationId: batch[1].mutationId, status: .applied),
        ], lastMutationId: batch[1].mutationId)
        let acknowledgement = try store.acknowledge(response, for: batch)
        #expect(acknowledgement.acknowledged == 1 && acknowledgement.rejected == 0 && acknowledgement.deferred == 1)
        #expect(try store.rejections().isEmpty)
        let waiting = try store.pendingMutations()
        #expect(waiting.count == 1)
        #expect(waiting[0].mutationId > batch[1].mutationId, "a new id: the server has seen the old one")
        #expect(waiting[0].id == first.id && waiting[0].fields == batch[0].fields && waiting[0].clocks == batch[0].clocks)
        #expect(try store.fetch(collection: "sermons", id: first.id)?.syncState == .pending)
        #expect(try store.lockedSpaces() == [fixture.space], "the space is known to be encrypted now, and has no key here")

        // Once the device knows the space's key version, a clear value refused there is a real rejection.
        try store.writer.write { db in   // what a pull naming the space's key version 1 records
            try db.execute(sql: "UPDATE ferry_space_keys SET key_version = 1 WHERE space = ?", arguments: [fixture.space.uuidString.lowercased()])
        }
        let again = try store.pendingMutations()
        let refused = try store.acknowledge(PushResponse(results: [
            MutationResult(mutationId: again[0].mutationId, status: .rejected, code: "encryption_required", message: "Space is end-to-end encrypted."),
        ], lastMutationId: again[0].mutationId), for: again)
        #expect(refused.rejected == 1 && refused.deferred == 0)
        #expect(try store.pendingMutations().isEmpty)
        #expect(try store.rejections().map(\.code) == ["encryption_required"])
    }

    @Test("clocks the server lowered (too far ahead of its own) replace the device's, unless a later local write clocked the field")
    func serverClocks() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let sermon = try store.save(collection: "sermons", fields: StoreFixture.sermonFields)
        let batch = try store.pendingMutations()
        let lowered = fixture.remoteClock(-3600, node: "server")
        try store.save(collection: "sermons", id: sermon.id, fields: ["date": "2026-12-01T10:00:00Z"])   // a later local write
        let response = PushResponse(results: [
            MutationResult(mutationId: batch[0].mutationId, status: .applied, clocks: ["title": lowered, "date": lowered]),
        ], lastMutationId: batch[0].mutationId)
        try store.acknowledge(response, for: batch)
        let record = try #require(try store.fetch(collection: "sermons", id: sermon.id))
        #expect(record.clocks["title"] == lowered)
        #expect(record.clocks["date"] != lowered, "the later local write keeps its clock")
    }

    @Test("a store opened with a newer schema adds the new collection and field, keeping data")
    func additiveMigration() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "store.sqlite")
        let space = UUID()
        let old = try SchemaParser.parse("collections:\n  tasks:\n    fields:\n      title: text\n")
        let id = try LocalStore(fileURL: file, schema: old, defaultSpace: space).save(collection: "tasks", fields: ["title": "Buy milk"]).id
        let new = try SchemaParser.parse("collections:\n  tasks:\n    fields:\n      title: text\n      done: bool\n  tags:\n    fields:\n      name: text\n")
        let store = try LocalStore(fileURL: file, schema: new, defaultSpace: space)
        try store.save(collection: "tasks", id: id, fields: ["done": true])
        try store.save(collection: "tags", fields: ["name": "home"])
        let task = try #require(try store.fetch(collection: "tasks", id: id))
        #expect(task.fields["title"] == "Buy milk" && task.fields["done"] == .bool(true))
        #expect(try store.fetchAll(collection: "tasks", where: ["done": true]).count == 1)
        #expect(try store.pendingCount() == 3)
        let reopened = try LocalStore(fileURL: file, schema: new, defaultSpace: space)
        #expect(reopened.deviceId == store.deviceId, "the device id is kept in the file")
    }

    @Test("local clock readings only go up: after an acknowledgement empties the outbox, a renumbering, a wall clock set back, a reopening")
    func clockNeverGoesBack() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "store.sqlite")
        let wall = TestClock(StoreFixture.start)
        let space = UUID()
        let schema = try SchemaParser.parse("collections:\n  notes:\n    fields:\n      title: text\n")
        let store = try LocalStore(fileURL: file, schema: schema, defaultSpace: space, now: { wall.now })
        var readings: [HLC] = []
        func write(_ store: LocalStore, _ title: String) throws {
            let record = try store.save(collection: "notes", fields: ["title": .string(title)])
            readings.append(try #require(record.clocks["title"]))
        }
        let savedBefore = try store.writer.read { db in try String.fetchOne(db, sql: "SELECT value FROM ferry_state WHERE key = 'clock'") }
        try write(store, "one")
        try write(store, "two")
        let saved = try store.writer.read { db in try String.fetchOne(db, sql: "SELECT value FROM ferry_state WHERE key = 'clock'") }
        #expect(saved == savedBefore, "a local write keeps its reading in its outbox entry, not in ferry_state")
        #expect(try store.latestClock() == readings.last)
        // A new record with no fields: its entry has no clock, so it cannot carry the reading (found by review).
        try store.save(collection: "notes", fields: [:])
        try write(store, "after a record without fields")

        let batch = try store.pendingMutations()
        try store.acknowledge(PushResponse(results: batch.map { MutationResult(mutationId: $0.mutationId, status: .applied) }, lastMutationId: batch.last!.mutationId), for: batch)
        #expect(try store.pendingCount() == 0)
        try write(store, "after the acknowledgement")
        try write(store, "to renumber")
        #expect(try store.renumberOutbox(after: 1_000) == 2)
        wall.advance(by: -3_600)
        try write(store, "with the wall clock an hour back")

        let reopened = try LocalStore(fileURL: file, schema: schema, defaultSpace: space, now: { wall.now })
        try write(reopened, "after reopening")
        for (earlier, later) in zip(readings, readings.dropFirst()) {
            #expect((earlier.milliseconds, earlier.counter) < (later.milliseconds, later.counter), "\(earlier) then \(later)")
        }
        #expect(readings.count == 7)
    }

    @Test("two stores open on one file (an app and its extension) never repeat a reading: each sees the other's writes")
    func clockAcrossConnections() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "store.sqlite")
        let wall = TestClock(StoreFixture.start)  // frozen: only the counters order the readings
        let space = UUID()
        let schema = try SchemaParser.parse("collections:\n  notes:\n    fields:\n      title: text\n")
        let app = try LocalStore(fileURL: file, schema: schema, defaultSpace: space, now: { wall.now })
        let widget = try LocalStore(fileURL: file, schema: schema, defaultSpace: space, now: { wall.now })
        var readings: [HLC] = []
        for index in 0..<6 {
            // app, app, widget, widget, …: each store's second write in a row may use what it remembers.
            let store = index / 2 % 2 == 0 ? app : widget
            for _ in 0..<2 {
                let record = try store.save(collection: "notes", fields: ["title": .string("note \(index)")])
                readings.append(try #require(record.clocks["title"]))
            }
        }
        // A pulled change seen by one store moves the other's next reading past it too.
        let remote = HLC(milliseconds: readings.last!.milliseconds, counter: readings.last!.counter + 50, node: UUID().lowercasedText)
        try widget.apply(PullResponse(
            changes: [Change(space: space, collection: "notes", id: UUID(), seq: 1, fields: ["title": .string("remote")], clocks: ["title": remote], deleted: false)],
            cursors: [space: 1], hasMore: false
        ))
        readings.append(remote)
        readings.append(try #require(try app.save(collection: "notes", fields: ["title": .string("after the pull")]).clocks["title"]))
        for (earlier, later) in zip(readings, readings.dropFirst()) {
            #expect((earlier.milliseconds, earlier.counter) < (later.milliseconds, later.counter), "\(earlier) then \(later)")
        }
    }
}
