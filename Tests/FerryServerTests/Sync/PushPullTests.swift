import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/sync/v1/push` and `/pull` on a live server, on both engines.
@Suite("Sync: push and pull")
struct PushPullTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("a pushed aggregate is pulled whole by a second device, and a replayed push changes nothing", arguments: TestEngine.available)
    func roundTripAndReplay(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var tablet = try await phone.sibling()
            let sermon = UUID()
            let batch = [
                phone.upsert("sermons", sermon, ["title": "Grace", "date": "2026-11-21T10:00:00Z", "duration": 1800]),
                phone.upsert("notes", ["sermon_id": .string(sermon.uuidString), "text": "first point", "timestamp": 12.5]),
                phone.upsert("transcripts", ["sermon_id": .string(sermon.uuidString), "segments": .array([.object(["t": 0, "text": "Hello"])])]),
            ]
            let reply = try await phone.push(batch)
            #expect(reply.results.map(\.status) == [.applied, .applied, .applied])
            #expect(reply.lastMutationId == 3)

            let pulled = try await tablet.pullAll()
            #expect(pulled.changes.count == 3)
            let rows = latestRows(pulled.changes)
            #expect(rows[sermon]?.fields["title"] == .string("Grace"))
            #expect(rows[sermon]?.fields["date"] == .string("2026-11-21T10:00:00.000Z"), "timestamps come back in one canonical form")
            #expect(Set(pulled.changes.map(\.collection)) == ["sermons", "notes", "transcripts"])
            #expect(tablet.cursors[phone.userID] == 3)

            let replay = try await phone.push(batch)
            #expect(replay.results.map(\.status) == [.duplicate, .duplicate, .duplicate])
            #expect(try await tablet.pullAll().changes.isEmpty, "a replay writes nothing, so nothing new is pulled")
        }
    }

    @Test("one bad mutation is rejected with its code and never blocks the others", arguments: TestEngine.available)
    func perMutationRejections(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { config in
            AuthHarness.fastHashing(&config)
            config.sync.maximumRecordBytes = 2048
        }) { server in
            var device = try await SyncDevice.signUp(server)
            let stranger = try await SyncDevice.signUp(server, "stranger")
            let sermon = UUID()
            var batch: [Mutation] = []
            batch.append(device.upsert("sermons", sermon, ["title": "Ok", "date": "2026-11-21T10:00:00Z"]))
            batch.append(device.upsert("sermonz", ["title": "typo"]))
            batch.append(device.upsert("sermons", ["title": "x", "date": "2026-11-21T10:00:00Z", "colour": "red"]))
            batch.append(device.upsert("sermons", ["title": 42, "date": "2026-11-21T10:00:00Z"]))
            batch.append(device.upsert("sermons", space: stranger.userID, ["title": "not mine", "date": "2026-11-21T10:00:00Z"]))
            batch.append(device.upsert("sermons", ["title": .string(String(repeating: "a", count: 4000)), "date": "2026-11-21T10:00:00Z"]))
            batch.append(device.upsert("notes", ["sermon_id": .string(UUID().uuidString), "text": "orphan"]))
            batch.append(device.upsert("sermons", ["speaker": "no title"]))
            var unclocked = device.upsert("sermons", ["title": "t", "date": "2026-11-21T10:00:00Z"])
            unclocked.clocks = [:]
            batch.append(unclocked)
            batch.append(device.upsert("notes", ["sermon_id": .string(sermon.uuidString), "text": "fine"]))

            let reply = try await device.push(batch)
            #expect(reply.results.map(\.code) == [
                nil, "unknown_collection", "unknown_field", "type_mismatch", "forbidden_space", "record_too_large",
                "parent_missing", "invalid_record", "invalid_clock", nil,
            ])
            #expect(reply.results.first?.status == .applied && reply.results.last?.status == .applied)
            #expect(reply.results.allSatisfy { $0.status == .applied || ($0.message ?? "").count > 10 }, "every rejection says why")
            #expect(reply.lastMutationId == batch.last?.mutationId, "rejected mutations are acknowledged too")
            var reader = device
            #expect(try await reader.pullAll().changes.count == 2)
        }
    }

    @Test("whole-request errors have a status, a code and a message, and change nothing", arguments: TestEngine.available)
    func wholeRequestErrors(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { config in
            AuthHarness.fastHashing(&config)
            config.sync.maximumBatchLength = 5
            config.sync.maximumPushBytes = 64 * 1024
        }) { server in
            var device = try await SyncDevice.signUp(server)
            let tooMany = (0..<6).map { _ in device.upsert("sermons", ["title": "t", "date": "2026-11-21T10:00:00Z"]) }
            let batchReply = try await device.send("POST", "/sync/v1/push", PushRequest(deviceId: device.deviceID, mutations: tooMany))
            #expect(batchReply.status == 422 && batchReply.errorCode == "batch_too_large")

            let big = device.upsert("sermons", ["title": .string(String(repeating: "b", count: 70 * 1024)), "date": "2026-11-21T10:00:00Z"])
            let bigReply = try await device.send("POST", "/sync/v1/push", PushRequest(deviceId: device.deviceID, mutations: [big]))
            #expect(bigReply.status == 413 && bigReply.errorCode == "payload_too_large")

            let outOfOrder = [tooMany[1], tooMany[0]]
            let orderReply = try await device.send("POST", "/sync/v1/push", PushRequest(deviceId: device.deviceID, mutations: outOfOrder))
            #expect(orderReply.status == 422 && orderReply.errorCode == "mutation_out_of_order")
            // An id past 2^53-1 is out of the ids' range (docs/sync.md), though no JSON number the reader takes.
            let pastReply = try await device.auth.send(
                "POST", "/sync/v1/push",
                json: ["deviceId": device.deviceID.uuidString, "mutations": [[
                    "mutationId": 9_007_199_254_740_992 as Int64, "space": device.userID.uuidString, "collection": "sermons",
                    "id": UUID().uuidString, "op": "upsert", "fields": ["title": "t"], "clocks": [:] as [String: String],
                ] as [String: Any]]],
                token: device.session.accessToken
            )
            #expect(pastReply.status == 422 && pastReply.errorCode == "mutation_out_of_order", "\(pastReply.status) \(String(describing: pastReply.errorCode))")

            let garbage = try await device.auth.send("POST", "/sync/v1/push", body: Data("{\"deviceId\": 3".utf8), token: device.session.accessToken)
            #expect(garbage.status == 400 && garbage.errorCode == "bad_request")
            let badClock = try await device.auth.send(
                "POST", "/sync/v1/push",
                json: ["deviceId": UUID().uuidString, "mutations": [[
                    "mutationId": 1, "space": device.userID.uuidString, "collection": "sermons", "id": UUID().uuidString,
                    "op": "upsert", "fields": ["title": "t"], "clocks": ["title": "yesterday"],
                ]]],
                token: device.session.accessToken
            )
            #expect(badClock.status == 400 && badClock.errorCode == "bad_request")
            let longKey = "not-a-space-" + String(repeating: "x", count: 5000)
            let badCursor = try await device.auth.send("POST", "/sync/v1/pull", json: ["cursors": [longKey: 1]], token: device.session.accessToken)
            #expect(badCursor.status == 400 && badCursor.errorCode == "bad_request")
            let badCursorMessage = try badCursor.json()["msg"] as? String ?? ""
            #expect(badCursorMessage.contains("cursors.not-a-space-xxx"), "the message names the member: \(badCursorMessage)")
            #expect(badCursorMessage.count < 200, "a made-up key is echoed cut to 40 characters, not whole")
            let negative = try await device.send("POST", "/sync/v1/pull", PullRequest(cursors: [device.userID: -1]))
            #expect(negative.status == 422 && negative.errorCode == "validation_failed")

            let anonymous = try await device.auth.send("POST", "/sync/v1/pull", json: [:])
            #expect(anonymous.status == 401 && anonymous.errorCode == "no_authorization")
            let forged = try await device.auth.send("POST", "/sync/v1/pull", json: [:], token: "not.a.jwt")
            #expect(forged.status == 401 && forged.errorCode == "bad_jwt")
            let noKey = try await device.auth.send("POST", "/sync/v1/pull", json: [:], token: device.session.accessToken, omitAPIKey: true)
            #expect(noKey.status == 401)

            #expect(try await device.pullAll().changes.isEmpty, "none of those requests wrote anything")
        }
    }

    @Test("deleting a parent tombstones its children in the same commit", arguments: TestEngine.available)
    func cascadeDelete(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var tablet = try await phone.sibling()
            let sermon = UUID(), note = UUID(), transcript = UUID(), other = UUID()
            _ = try await phone.push([
                phone.upsert("sermons", sermon, ["title": "Grace", "date": "2026-11-21T10:00:00Z"]),
                phone.upsert("sermons", other, ["title": "Hope", "date": "2026-11-22T10:00:00Z"]),
                phone.upsert("notes", note, ["sermon_id": .string(sermon.uuidString), "text": "n"]),
                phone.upsert("transcripts", transcript, ["sermon_id": .string(sermon.uuidString), "text": "t"]),
            ])
            _ = try await tablet.pullAll()
            let reply = try await tablet.push([tablet.delete("sermons", sermon)])
            #expect(reply.results.first?.status == .applied)

            let rows = latestRows(try await phone.pullAll().changes)
            #expect(rows[sermon]?.deleted == true && rows[note]?.deleted == true && rows[transcript]?.deleted == true)
            #expect(rows[other]?.deleted == false)
            #expect(rows[note]?.clocks["_deleted"] == rows[sermon]?.clocks["_deleted"], "children carry the parent's delete clock")

            let late = try await phone.push([phone.upsert("notes", ["sermon_id": .string(sermon.uuidString), "text": "too late"])])
            #expect(late.results.first?.code == "parent_missing")
        }
    }

    @Test("concurrent edits merge per field; the later clock wins a field; equal wall times lose nothing", arguments: TestEngine.available)
    func fieldMerge(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var tablet = try await phone.sibling()
            let sermon = UUID()
            let instant = Date(timeIntervalSince1970: 1_790_000_000)
            _ = try await phone.push([phone.upsert("sermons", sermon, ["title": "Draft", "date": "2026-11-21T10:00:00Z"], now: instant)])
            _ = try await tablet.pullAll()
            tablet.clock.observe(HLC(milliseconds: Int64(instant.timeIntervalSince1970 * 1000), counter: 0, node: "x"))

            // Offline on both, same wall-clock instant: different fields, then the same field.
            let speaker = phone.upsert("sermons", sermon, ["speaker": "Pastor John"], now: instant)
            let duration = tablet.upsert("sermons", sermon, ["duration": 1800], now: instant)
            let phoneTitle = phone.upsert("sermons", sermon, ["title": "Phone title"], now: instant)
            let tabletTitle = tablet.upsert("sermons", sermon, ["title": "Tablet title"], now: instant.addingTimeInterval(1))
            _ = try await tablet.push([duration, tabletTitle])
            _ = try await phone.push([speaker, phoneTitle])

            for var device in [phone, tablet] {
                device.cursors = [:]
                let row = try #require(latestRows(try await device.pullAll().changes)[sermon])
                #expect(row.fields["speaker"] == .string("Pastor John"))
                #expect(row.fields["duration"] == .number(1800))
                #expect(row.fields["title"] == .string("Tablet title"), "the later clock wins, whatever order the pushes came in")
            }

            // Two edits in the same millisecond on one device: the second still wins (the counter orders them).
            let first = phone.upsert("sermons", sermon, ["speaker": "A"], now: instant)
            let second = phone.upsert("sermons", sermon, ["speaker": "B"], now: instant)
            #expect(first.clocks["speaker"]! < second.clocks["speaker"]!)
            _ = try await phone.push([first, second])
            let row = try #require(latestRows(try await tablet.pullAll().changes)[sermon])
            #expect(row.fields["speaker"] == .string("B"))
        }
    }

    @Test("a clock far ahead of the server's is lowered, and the reply says so", arguments: TestEngine.available)
    func clockCap(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let future = Date().addingTimeInterval(365 * 24 * 3600)
            let mutation = device.upsert("sermons", ["title": "From the future", "date": "2026-11-21T10:00:00Z"], now: future)
            let reply = try await device.push([mutation])
            let stored = try #require(reply.results.first?.clocks?["title"])
            #expect(stored < mutation.clocks["title"]!)
            #expect(stored.date < Date().addingTimeInterval(120))
            let row = try #require(try await device.pullAll().changes.first)
            #expect(row.clocks["title"] == stored, "the server stores what it reported")
        }
    }

    @Test("pages of a pull never skip or repeat a change", arguments: TestEngine.available)
    func pagination(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let batch = (0..<25).map { index in device.upsert("sermons", ["title": .string("s\(index)"), "date": "2026-11-21T10:00:00Z"]) }
            _ = try await device.push(batch)
            var reader = try await device.sibling()
            let pulled = try await reader.pullAll(limit: 10)
            #expect(pulled.requests == 3)
            #expect(pulled.changes.count == 25 && Set(pulled.changes.map(\.id)).count == 25)
            #expect(pulled.changes.map(\.seq) == pulled.changes.map(\.seq).sorted())
        }
    }

    @Test("a profile written through /sync/v1/profile reaches devices by pull, with clocks", arguments: TestEngine.available)
    func profileThroughPull(_ engine: TestEngine) async throws {
        let schema = """
            version: 1
            profile:
              fields:
                display_name: text
            collections: {}
            """
        try await RouterServer.with(engine, schema: schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let reply = try await device.send("PATCH", "/sync/v1/profile", ["fields": ["display_name": "Ada"]])
            #expect(reply.status == 200)
            let change = try #require(try await device.pullAll().changes.first { $0.collection == "profiles" })
            #expect(change.id == device.userID && change.fields["display_name"] == "Ada")
            #expect(change.clocks["display_name"]?.node == "server")
        }
    }

    @Test("a write that breaks a unique key is rejected alone; the rest of the batch commits", arguments: TestEngine.available)
    func uniqueKey(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let sermon = UUID()
            let parent = JSONValue.string(sermon.uuidString)
            let reply = try await device.push([
                device.upsert("sermons", sermon, ["title": "Grace", "date": "2026-11-21T10:00:00Z"]),
                device.upsert("transcripts", ["sermon_id": parent, "text": "first"]),
                device.upsert("transcripts", ["sermon_id": parent, "text": "second"]),
                device.upsert("notes", ["sermon_id": parent, "text": "kept"]),
            ])
            #expect(reply.results.map(\.code) == [nil, nil, "unique_violation", nil])
            let rows = try await device.pullAll().changes
            #expect(rows.filter { $0.collection == "transcripts" }.map { $0.fields["text"] } == ["first"])
            #expect(rows.count == 3)
        }
    }

    @Test("rows of a collection after one that breaks its unique key are written, and the server keeps serving", arguments: TestEngine.available)
    func rowsAfterUniqueViolation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let (first, second) = (UUID(), UUID())
            let (one, two) = (JSONValue.string(first.uuidString), JSONValue.string(second.uuidString))
            let reply = try await device.push([
                device.upsert("sermons", first, ["title": "Grace", "date": "2026-11-21T10:00:00Z"]),
                device.upsert("sermons", second, ["title": "Hope", "date": "2026-11-22T10:00:00Z"]),
                device.upsert("transcripts", ["sermon_id": one, "text": "first"]),
                device.upsert("transcripts", ["sermon_id": one, "text": "again"]),
                // The same collection's statement right after the one that failed (SQLite: a statement GRDB dropped).
                device.upsert("transcripts", ["sermon_id": two, "text": "other"]),
                device.upsert("transcripts", ["sermon_id": two, "text": "twice"]),
                device.upsert("transcripts", ["sermon_id": one, "text": "thrice"]),
            ])
            #expect(reply.results.map(\.code) == [nil, nil, nil, "unique_violation", nil, "unique_violation", "unique_violation"])
            let next = try await device.push([device.upsert("notes", ["sermon_id": two, "text": "still serving"])])
            #expect(next.results.map(\.status) == [.applied])
            let texts = try await device.pullAll().changes.filter { $0.collection == "transcripts" }.compactMap { $0.fields["text"]?.stringValue }
            #expect(texts.sorted() == ["first", "other"])
        }
    }
}
