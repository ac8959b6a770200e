import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// A push's reply moves the device's cursor past its own writes when, and only when, the device held the space's
/// last commit and the push wrote nothing but the records it names (``PushResponse/cursors``); on both engines.
@Suite("Sync: a push moves the pusher's cursor")
struct PushCursorTests {
    @Test("the cursor moves only from the space's last commit and only past the pusher's own rows", arguments: TestEngine.available)
    func cursorMovesPastOwnWrites(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try PushPullTests.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var tablet = try await phone.sibling()
            let space = phone.userID
            let sermon = UUID()

            // A fresh space: the phone's cursor 0 is its last commit.
            let grace = phone.upsert("sermons", sermon, ["title": "Grace", "date": "2026-11-21T10:00:00Z"])
            let first = try await phone.push([grace], cursors: [space: 0])
            #expect(first.cursors == [space: 1])
            phone.cursors[space] = 1
            #expect(try await phone.pullAll().changes.isEmpty, "the phone does not pull its own write back")
            #expect(try await tablet.pullAll().changes.map(\.id) == [sermon], "everyone else does")

            // The tablet writes; the phone, one commit behind, pushes: its cursor must not skip the tablet's write.
            let tabletNote = tablet.upsert("notes", ["sermon_id": .string(sermon.uuidString), "text": "from the tablet"])
            #expect(try await tablet.push([tabletNote], cursors: [space: 1]).cursors == [space: 2])
            let phoneNote = phone.upsert("notes", ["sermon_id": .string(sermon.uuidString), "text": "from the phone"])
            let behind = try await phone.push([phoneNote], cursors: [space: 1])
            #expect(behind.results.map(\.status) == [.applied])
            #expect(behind.cursors.isEmpty, "a device behind the last commit pulls")
            #expect(Set(try await phone.pullAll().changes.map(\.id)) == [tabletNote.id, phoneNote.id])

            // A delete that cascades to children writes rows the device did not name: it pulls the server's verdict.
            #expect(phone.cursors[space] == 3)
            let removal = phone.delete("sermons", sermon)
            let delete = try await phone.push([removal], cursors: [space: 3])
            #expect(delete.results.map(\.status) == [.applied])
            #expect(delete.cursors.isEmpty, "a cascade is pulled, not assumed")
            #expect(try await phone.pullAll().changes.count == 3, "the sermon and both notes, tombstoned")

            // A child created and its parent deleted in one push: the child is named, but the cascade wrote its tombstone.
            let parent = UUID()
            let batch = [
                phone.upsert("sermons", parent, ["title": "Peace", "date": "2026-11-22T10:00:00Z"]),
                phone.upsert("notes", ["sermon_id": .string(parent.uuidString), "text": "gone with its sermon"]),
                phone.delete("sermons", parent),
            ]
            let created = try await phone.push(batch, cursors: [space: phone.cursors[space, default: 0]])
            #expect(created.results.map(\.status) == [.applied, .applied, .applied])
            #expect(created.cursors.isEmpty, "the named child's tombstone came from the cascade")
            #expect(try await phone.pullAll().changes.count == 2)

            // No cursors sent (an older device), a rejected write, a replay: no cursor moves.
            let hope = phone.upsert("sermons", ["title": "Hope", "date": "2026-11-22T10:00:00Z"])
            let plain = try await phone.push([hope])
            #expect(plain.results.map(\.status) == [.applied] && plain.cursors.isEmpty)
            let head = phone.cursors[space, default: 0] + 1
            let untitled = phone.upsert("sermons", ["speaker": "no title"])
            let refused = try await phone.push([untitled], cursors: [space: head])
            #expect(refused.results.map(\.status) == [.rejected] && refused.cursors.isEmpty)
            let again = phone.upsert("sermons", ["title": "Faith", "date": "2026-11-23T10:00:00Z"])
            #expect(try await phone.push([again], cursors: [space: head]).cursors == [space: head + 1])
            #expect(try await phone.push([again], cursors: [space: head + 1]).cursors.isEmpty, "a replay writes nothing")
        }
    }

    @Test("a push whose clocks the server lowered leaves the cursor: the device pulls the row as stored", arguments: TestEngine.available)
    func loweredClockKeepsCursor(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try PushPullTests.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            let future = Date().addingTimeInterval(365 * 24 * 3600)
            let ahead = phone.upsert("sermons", ["title": "From the future", "date": "2026-11-21T10:00:00Z"], now: future)
            let reply = try await phone.push([ahead], cursors: [phone.userID: 0])
            #expect(reply.results.first?.clocks?["title"] != nil, "the server lowered the clock")
            #expect(reply.cursors.isEmpty)
            #expect(try await phone.pullAll().changes.map(\.id) == [ahead.id])
        }
    }

    @Test("a negative cursor in a push is refused and changes nothing", arguments: TestEngine.available)
    func negativeCursor(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try PushPullTests.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            let write = phone.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z"])
            let reply = try await phone.send(
                "POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: [write], cursors: [phone.userID: -1])
            )
            #expect(reply.status == 422 && reply.errorCode == "validation_failed")
            #expect(try await phone.pullAll().changes.isEmpty)
        }
    }
}
