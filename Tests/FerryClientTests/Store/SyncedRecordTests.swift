import FerryClient
import FerryCore
import Foundation
import Testing

@Suite("LocalStore: typed records")
struct SyncedRecordTests {
    struct Sermon: SyncedRecord, Equatable {
        static let collection = "sermons"
        var id: UUID
        var title: String
        var date: Date
        var speaker: String?
        var duration: Int?
        var is_archived: Bool?
    }

    struct Note: SyncedRecord, Equatable {
        static let collection = "notes"
        var id: UUID
        var sermon_id: UUID
        var text: String
        var timestamp: Double?
    }

    @Test("save, fetch, fetchAll, delete: Codable models over the same rows; only changed fields are pushed")
    func roundTrip() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        var sermon = Sermon(id: UUID(), title: "Sunday", date: Date(timeIntervalSince1970: 1_790_000_000), speaker: "John", duration: 3600, is_archived: false)
        try store.save(sermon)
        #expect(try store.fetch(Sermon.self, id: sermon.id) == sermon)
        sermon.speaker = nil
        sermon.title = "Sunday Service"
        try store.save(sermon)
        #expect(try store.fetch(Sermon.self, id: sermon.id) == sermon)
        let update = try #require(try store.pendingMutations().last)
        #expect(Set(update.fields.keys) == ["title", "speaker"])
        #expect(update.fields["speaker"] == .null)

        let note = Note(id: UUID(), sermon_id: sermon.id, text: "Key point", timestamp: 12.5)
        try store.save(note)
        #expect(try store.fetchAll(Note.self, where: ["sermon_id": .string(sermon.id.uuidString)]) == [note])
        try store.delete(sermon)
        #expect(try store.fetch(Sermon.self, id: sermon.id) == nil)
        #expect(try store.fetchAll(Note.self).isEmpty)
    }

    @Test("observation delivers the current value, then each change, local or pulled")
    func observation() async throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let observation = try store.observeAll(Sermon.self)
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == [])
        let sermon = Sermon(id: UUID(), title: "Sunday", date: Date(timeIntervalSince1970: 1_790_000_000))
        try store.save(sermon)
        #expect(try await iterator.next()?.map(\.title) == ["Sunday"])
        try store.apply(PullResponse(changes: [
            Change(space: fixture.space, collection: "sermons", id: sermon.id, seq: 1, fields: ["title": "Renamed"],
                   clocks: ["title": HLC(milliseconds: 9_999_999_999_999, counter: 0, node: "x")], deleted: false),
        ], cursors: [fixture.space: 1], hasMore: false))
        #expect(try await iterator.next()?.map(\.title) == ["Renamed"])
    }
}
