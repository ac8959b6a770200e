@testable import FerryServer
import FerryCore
import FerryTesting
import Foundation
import Testing

/// `/rest/v1` as one more front-end over the synced records: its writes merge, take sequence numbers, poke streams
/// and are pulled by devices; devices' writes are read through it; and it reaches exactly the caller's spaces.
@Suite("Tables: the same records as sync")
struct TableSyncTests {
    static let schema = """
        collections:
          sermons:
            fields:
              title: { type: text, required: true }
              date: timestamp
          notes:
            parent: { collection: sermons, field: sermon_id }
            fields:
              sermon_id: uuid
              text: text
          messages:
            encrypted: true
            fields:
              body: text
        """

    /// A table request as `device`'s user (or with `bearer` instead of its token), JSON body, representation back.
    static func rest(
        _ server: RouterServer, _ method: String, _ path: String, as device: SyncDevice? = nil, bearer: String? = nil,
        apiKey: String? = nil, body: JSONValue? = nil, headers extra: [String: String] = [:]
    ) async throws -> (status: Int, json: JSONValue?) {
        var headers = ["apikey": apiKey ?? server.server.keys.anonKey, "Prefer": "return=representation"].merging(extra) { $1 }
        if let token = bearer ?? device?.session.accessToken { headers["Authorization"] = "Bearer \(token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        let reply = try await server.send(method, "/rest/v1/" + path, headers: headers, body: body.map { Data($0.jsonText.utf8) })
        return (reply.status, JSONValue(jsonText: String(decoding: reply.body, as: UTF8.self)))
    }

    @Test("a REST write is pulled by a device, a device's push is read through REST, and a REST write pokes streams", arguments: TestEngine.available)
    func sameRecords(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let slot = try server.server.hub.open(userID: device.userID, deviceID: device.deviceID, spaces: [device.userID: 0])
            defer { server.server.hub.close(slot.id) }
            let inserted = try await Self.rest(server, "POST", "sermons", as: device, body: ["title": "Grace", "date": "2026-11-01T10:00:00Z"])
            #expect(inserted.status == 201)
            let row = try #require(inserted.json?.arrayValue?.first)
            #expect(row["_space"]?.stringValue == device.userID.lowercasedText, "an insert without _space goes to the personal space")
            let id = try #require(row["id"]?.stringValue.flatMap(UUID.init(uuidString:)))
            let poke = await slot.mailbox.next()
            #expect(poke?.changes[device.userID] != nil, "the REST write poked the user's stream")
            let carried = try #require(poke?.changes[device.userID]?.carried.first, "the poke carries the REST write")
            #expect(carried.after == 0 && carried.text.contains("Grace"))

            let pulled = try await device.pullAll().changes
            #expect(pulled.map(\.id) == [id])
            #expect(pulled.first?.fields["title"] == "Grace")
            #expect(pulled.first?.clocks["title"]?.node == "server", "a REST write carries the server's clock")

            // The device edits it (its clock may run ahead of the server's), then REST updates it: the later write wins.
            let edit = device.upsert("sermons", id, ["title": "Grace (device)"], now: Date().addingTimeInterval(30))
            #expect(try await device.push([edit]).results.first?.status == .applied)
            let read = try await Self.rest(server, "GET", "sermons?select=title&id=eq.\(id.lowercasedText)", as: device)
            #expect(read.json == [["title": "Grace (device)"]], "a device's write is read through REST at once")
            let updated = try await Self.rest(server, "PATCH", "sermons?id=eq.\(id.lowercasedText)", as: device, body: ["title": "Grace (backend)"])
            #expect(updated.json?.arrayValue?.first?["title"] == "Grace (backend)", "a REST write arriving later wins over a clock ahead of it")
            let again = try await device.pullAll().changes
            #expect(again.last?.fields["title"] == "Grace (backend)")

            // A deleted record is a tombstone to sync and absent to REST; its children go with it.
            let note = try await Self.rest(server, "POST", "notes", as: device, body: ["sermon_id": .string(id.lowercasedText), "text": "hi"])
            #expect(note.status == 201)
            let deleted = try await Self.rest(server, "DELETE", "sermons?id=eq.\(id.lowercasedText)", as: device)
            #expect(deleted.json?.arrayValue?.count == 1)
            #expect(try await Self.rest(server, "GET", "sermons", as: device).json == [])
            #expect(try await Self.rest(server, "GET", "notes", as: device).json == [], "the delete cascaded to the note")
            let tombstones = try await device.pullAll().changes
            #expect(tombstones.filter(\.deleted).count == 2, "devices pull both tombstones")

            // Inserting the deleted id again makes a new row: none of the deleted one's values come back.
            let revived = try await Self.rest(server, "POST", "sermons", as: device, body: ["id": .string(id.lowercasedText), "title": "Again"])
            #expect(revived.status == 201)
            #expect(revived.json?.arrayValue?.first?["date"] == .null, "the deleted record's date is not revived")
            #expect(try await device.pullAll().changes.last?.deleted == false)
        }
    }

    @Test("another account sees, changes and inserts nothing of a user's; a viewer cannot write; the anon key reads nothing", arguments: TestEngine.available)
    func isolation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let stranger = try await SyncDevice.signUp(server, "stranger")
            let viewer = try await SyncDevice.signUp(server, "viewer")
            let company = try await owner.createSpace("Acme")
            try await owner.share(company.id, with: viewer, as: .viewer)
            let made = try await Self.rest(server, "POST", "sermons", as: owner, body: ["title": "Mine", "_space": .string(company.id.lowercasedText)])
            let id = try #require(made.json?.arrayValue?.first?["id"]?.stringValue)

            #expect(try await Self.rest(server, "GET", "sermons", as: stranger).json == [])
            #expect(try await Self.rest(server, "PATCH", "sermons?id=eq.\(id)", as: stranger, body: ["title": "Theirs"]).json == [])
            #expect(try await Self.rest(server, "DELETE", "sermons?id=eq.\(id)", as: stranger).json == [])
            let foreign = try await Self.rest(server, "POST", "sermons", as: stranger, body: ["title": "In", "_space": .string(company.id.lowercasedText)])
            #expect(foreign.status == 403 && foreign.json?["code"] == "42501")

            #expect(try await Self.rest(server, "GET", "sermons?select=title", as: viewer).json == [["title": "Mine"]], "a viewer reads")
            let viewerWrite = try await Self.rest(server, "PATCH", "sermons?id=eq.\(id)", as: viewer, body: ["title": "Viewer"])
            #expect(viewerWrite.status == 403 && viewerWrite.json?["code"] == "42501", "a viewer's write is refused")

            let anonymous = try await Self.rest(server, "GET", "sermons")
            #expect(anonymous.status == 401 && anonymous.json?["code"] == "42501")
            let anonBearer = try await Self.rest(server, "GET", "sermons", bearer: server.server.keys.anonKey)
            #expect(anonBearer.status == 401)
            #expect(try await Self.rest(server, "GET", "sermons?select=title", as: owner).json == [["title": "Mine"]], "nothing changed")
        }
    }

    @Test("the service-role key reaches every space and names _space; it is no user anywhere else", arguments: TestEngine.available)
    func serviceRole(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            var user = try await SyncDevice.signUp(server)
            let key = server.server.keys.serviceRoleKey
            let written = try await Self.rest(
                server, "POST", "sermons", bearer: key, apiKey: key, body: ["title": "Transcribed", "_space": .string(user.userID.lowercasedText)]
            )
            #expect(written.status == 201)
            #expect(try await user.pullAll().changes.first?.fields["title"] == "Transcribed", "the user's device pulls the backend's write")
            let unnamed = try await Self.rest(server, "POST", "sermons", bearer: key, apiKey: key, body: ["title": "Where?"])
            #expect(unnamed.status == 400 && unnamed.json?["code"] == "23502")
            let everything = try await Self.rest(server, "GET", "sermons?select=title", bearer: key, apiKey: key)
            #expect(everything.json == [["title": "Transcribed"]])
            for (method, path) in [("POST", "/auth/v1/logout"), ("GET", "/auth/v1/user"), ("GET", "/sync/v1/devices"), ("POST", "/sync/v1/pull")] {
                let reply = try await server.send(method, path, headers: ["apikey": server.server.keys.anonKey, "Authorization": "Bearer \(key)"], body: Data("{}".utf8))
                #expect(reply.status == 401, "\(method) \(path) refuses the service-role key as a user's token")
            }
        }
    }

    @Test("an end-to-end encrypted collection is read as ciphertext and never written in plaintext", arguments: TestEngine.available)
    func encrypted(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            let refused = try await Self.rest(server, "POST", "messages", as: user, body: ["body": "plain"])
            #expect(refused.status == 403 && refused.json?["code"] == "42501")
            #expect(refused.json?["message"]?.stringValue?.contains("end-to-end encrypted") == true)
            #expect(try await Self.rest(server, "GET", "messages", as: user).json == [])
        }
    }

    @Test("a reply that would pass 64 MiB is refused with 54000 before it is built, however few rows or bytes the request has", arguments: TestEngine.available)
    func replyBudget(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            let title = JSONValue.string(String(repeating: "a", count: 200_000))
            let rows = JSONValue.array((0..<4).map { _ in ["title": title] })
            #expect(try await Self.rest(server, "POST", "sermons", as: user, body: rows, headers: ["Prefer": "return=minimal"]).status == 201)
            // The same column again and again: a 1 KB query asking for 4 × 360 × 200 KB.
            let repeated = Array(repeating: "title", count: 360).joined(separator: ",")
            for path in ["sermons?select=\(repeated)", "sermons?select=\(repeated)&limit=1"] {
                let reply = try await Self.rest(server, "GET", path, as: user)
                #expect(reply.status == 400 && reply.json?["code"] == "54000", "\(path.suffix(20)): \(reply.status)")
                #expect(reply.json?["message"]?.stringValue?.contains("64 MiB") == true)
            }
            let fine = try await Self.rest(server, "GET", "sermons?select=id,title", as: user)
            #expect(fine.status == 200 && fine.json?.arrayValue?.count == 4)
            // A parent embedded again and again under each of its children: 30 × 16 × 200 KB.
            let sermon = try #require(fine.json?.arrayValue?.first?["id"])
            let notes = JSONValue.array((0..<30).map { _ in ["sermon_id": sermon, "text": "n"] })
            #expect(try await Self.rest(server, "POST", "notes", as: user, body: notes, headers: ["Prefer": "return=minimal"]).status == 201)
            let parents = (1...16).map { "s\($0):sermons(title)" }.joined(separator: ",")
            let embedded = try await Self.rest(server, "GET", "notes?select=text,\(parents)", as: user)
            #expect(embedded.status == 400 && embedded.json?["code"] == "54000")
        }
    }

    @Test("a bare date written to a timestamp is that day's midnight, UTC, as in a filter (PostgreSQL's reading)", arguments: TestEngine.available)
    func bareDate(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            let made = try await Self.rest(server, "POST", "sermons", as: user, body: ["title": "Dated", "date": "2026-08-01"])
            #expect(made.status == 201 && made.json?.arrayValue?.first?["date"] == "2026-08-01T00:00:00.000Z", "\(String(describing: made.json))")
            let moved = try await Self.rest(server, "PATCH", "sermons?date=eq.2026-08-01", as: user, body: ["date": "2026-08-02"])
            #expect(moved.json?.arrayValue?.first?["date"] == "2026-08-02T00:00:00.000Z")
            let refused = try await Self.rest(server, "POST", "sermons", as: user, body: ["title": "Bad", "date": "2026-02-30"])
            #expect(refused.status == 400 && refused.json?["code"] == "22P02")
        }
    }

    @Test("an update or upsert that empties a required field or a parent link is 400 23502, as NOT NULL would be, and changes nothing", arguments: TestEngine.available)
    func requiredNeverEmptied(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            let sermon = try #require(try await Self.rest(server, "POST", "sermons", as: user, body: ["title": "Kept"]).json?.arrayValue?.first?["id"])
            let id = try #require(sermon.stringValue)
            #expect(try await Self.rest(server, "POST", "notes", as: user, body: ["sermon_id": sermon, "text": "n"]).status == 201)
            let attempts: [(String, String, JSONValue, [String: String])] = [
                ("PATCH", "sermons?id=eq.\(id)", ["title": .null], [:]),
                ("POST", "sermons", ["id": sermon, "title": .null], ["Prefer": "return=representation,resolution=merge-duplicates"]),
                ("PATCH", "notes?text=eq.n", ["sermon_id": .null], [:]),
            ]
            for (method, path, body, headers) in attempts {
                let reply = try await Self.rest(server, method, path, as: user, body: body, headers: headers)
                #expect(reply.status == 400 && reply.json?["code"] == "23502", "\(method) \(path): \(String(describing: reply.json))")
            }
            #expect(try await Self.rest(server, "GET", "sermons?select=title", as: user).json == [["title": "Kept"]])
            #expect(try await Self.rest(server, "GET", "notes?select=sermon_id", as: user).json == [["sermon_id": sermon]])
            // An optional field may be emptied.
            #expect(try await Self.rest(server, "PATCH", "notes?text=eq.n", as: user, body: ["text": .null]).status == 200)
        }
    }

    @Test("malformed requests are clear 4xx errors in PostgREST's shape that change nothing", arguments: TestEngine.available)
    func badInput(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            let cases: [(String, String, JSONValue?, Int, String)] = [
                ("GET", "nope", nil, 404, "PGRST205"),
                ("GET", "profiles", nil, 404, "PGRST205"),
                ("GET", "sermons?select=nope", nil, 400, "42703"),
                ("GET", "sermons?nope=eq.1", nil, 400, "42703"),
                // Sync columns are the sync protocol's: a table request names the collection's columns only.
                ("GET", "sermons?order=_seq.desc", nil, 400, "42703"),
                ("GET", "sermons?order=_updated_at.desc", nil, 400, "42703"),
                ("GET", "sermons?title=zz.1", nil, 400, "PGRST100"),
                ("GET", "sermons?or=(title.eq.1", nil, 400, "PGRST100"),
                ("GET", "sermons?date=gt.yesterday", nil, 400, "22P02"),
                ("GET", "sermons?id=eq.not-a-uuid", nil, 400, "22P02"),
                ("GET", "sermons?select=title,comments(*)", nil, 400, "PGRST200"),
                ("GET", "sermons?limit=-1", nil, 400, "PGRST100"),
                ("GET", "sermons?notes.text=eq.x", nil, 400, "PGRST108"),
                ("GET", "sermons?select=*,notes(*)&notes.offset=1&notes.limit=9223372036854775807", nil, 200, ""),
                ("GET", "sermons?limit=9223372036854775808&offset=123456789012345678901234567890", nil, 200, ""),
                ("GET", "sermons?limit=-9223372036854775809", nil, 400, "PGRST100"),
                ("GET", "sermons?select=:title", nil, 400, "PGRST100"),
                ("GET", "sermons?select=" + Array(repeating: "notes(*)", count: 17).joined(separator: ","), nil, 400, "PGRST100"),
                ("GET", "sermons?title=in.(" + Array(repeating: "a", count: 1001).joined(separator: ",") + ")", nil, 400, "PGRST100"),
                ("POST", "sermons", ["nope": 1], 400, "PGRST204"),
                ("POST", "sermons", ["title": 5], 400, "22P02"),
                ("POST", "sermons", ["date": "2026-01-01T00:00:00Z"], 400, "23502"),
                ("POST", "sermons", [1, 2], 400, "PGRST102"),
                ("POST", "notes", ["sermon_id": .string(UUID().uuidString), "text": "orphan"], 409, "23503"),
                ("POST", "sermons?on_conflict=title", ["title": "x"], 400, "42P10"),
                ("PATCH", "sermons", [["title": "x"]], 400, "PGRST102"),
            ]
            for (method, path, body, status, code) in cases {
                let reply = try await Self.rest(server, method, path, as: user, body: body)
                let shown = "\(method) \(path.prefix(80)): \(String(describing: reply.json).prefix(300))"
                guard status >= 400 else {
                    #expect(reply.status == status, "\(shown)")
                    continue
                }
                #expect(reply.status == status && reply.json?["code"]?.stringValue == code, "\(shown)")
                #expect(reply.json?["message"]?.stringValue?.isEmpty == false)
            }
            let huge = try await Self.rest(server, "GET", "sermons", as: user, headers: ["Range": "0-9223372036854775807"])
            #expect(huge.status == 200, "a Range to Int.max is a range, not a crash")
            let csv = try await Self.rest(server, "GET", "sermons", as: user, headers: ["Accept": "text/csv"])
            #expect(csv.status == 406 && csv.json?["code"] == "PGRST107", "a media type tables do not answer")
            #expect(try await Self.rest(server, "GET", "sermons", as: user).json == [], "nothing was written")
        }
    }
}

extension JSONValue {
    /// The member `key` of an object.
    fileprivate subscript(key: String) -> JSONValue? { objectValue?[key] }
}
