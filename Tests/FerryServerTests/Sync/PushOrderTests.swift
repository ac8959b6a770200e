import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Pushes of one device on the wire at once (`follows`, `maxInFlight`): none ever overtakes the one before it.
@Suite("Sync: a push sent behind another never overtakes it")
struct PushOrderTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    static func sermon(_ title: String) -> [String: JSONValue] {
        ["title": .string(title), "date": "2026-11-21T10:00:00Z"]
    }

    @Test("a push following a mutation the server has not processed is refused whole (409 push_out_of_order), then goes through", arguments: TestEngine.available)
    func refusedUntilItsPredecessorCommits(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var pad = try await phone.sibling()
            let first = try await phone.push([phone.upsert("sermons", Self.sermon("One")), phone.upsert("sermons", Self.sermon("Two"))])
            #expect(first.lastMutationId == 2 && first.maxInFlight == 3, "the server says it takes three pushes at once")

            // The push sent behind ids 3–4 arrives before them.
            let parentID = UUID()
            let earlier = [phone.upsert("sermons", parentID, Self.sermon("Three")), phone.upsert("sermons", Self.sermon("Four"))]
            let later = [phone.upsert("notes", ["sermon_id": .string(parentID.uuidString.lowercased()), "text": "A note"])]
            let overtaking = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: later, follows: 4))
            #expect(overtaking.status == 409 && overtaking.errorCode == "push_out_of_order")
            #expect((try overtaking.json())["last_mutation_id"] as? Int == 2)
            #expect(try await pad.pullAll().changes.count == 2, "the refused push changed nothing")

            let behind = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: earlier, follows: 2))
            #expect(behind.status == 200, "a push following the last processed id goes through")
            let again = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: later, follows: 4))
            let results = try phone.auth.decode(again, as: PushResponse.self).results
            #expect(results.map(\.status) == [.applied], "sent again once its predecessor committed, the child finds its parent")
            #expect(try await pad.pullAll().changes.count == 3)

            // Following an id the server went past is refused too: something else was processed in between.
            let past = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: [phone.upsert("sermons", Self.sermon("Six"))], follows: 4))
            #expect(past.status == 409 && past.errorCode == "push_out_of_order")
            #expect((try past.json())["last_mutation_id"] as? Int == 5)
        }
    }

    @Test("follows must be below the push's first id and not negative: 422, nothing changes", arguments: TestEngine.available)
    func malformedFollows(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var pad = try await phone.sibling()
            let mutation = phone.upsert("sermons", Self.sermon("One"))
            for follows: Int64 in [-1, 1, 2] {
                let reply = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: [mutation], follows: follows))
                #expect(reply.status == 422 && reply.errorCode == "mutation_out_of_order", "follows \(follows)")
            }
            let text = #"{"deviceId": "\#(phone.deviceID.uuidString.lowercased())", "mutations": [], "follows": "one"}"#
            let mistyped = try await phone.auth.send("POST", "/sync/v1/push", body: Data(text.utf8), token: phone.session.accessToken)
            #expect(mistyped.status == 400)
            #expect(try await pad.pullAll().changes.isEmpty)
        }
    }

    @Test("pushes sent two at a time, each following the one before: every parent lands before its child", arguments: TestEngine.available)
    func concurrentPairs(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var pad = try await phone.sibling()
            var refused = 0
            for round in 0..<12 {
                let parentID = UUID()
                let parents = (0..<50).map { phone.upsert("sermons", $0 == 0 ? parentID : UUID(), Self.sermon("Round \(round) sermon \($0)")) }
                let children = [phone.upsert("notes", ["sermon_id": .string(parentID.uuidString.lowercased()), "text": .string("Note \(round)")])]
                let device = phone
                let follows = parents.last!.mutationId
                async let first = device.send("POST", "/sync/v1/push", PushRequest(deviceId: device.deviceID, mutations: parents, follows: nil))
                async let second = device.send("POST", "/sync/v1/push", PushRequest(deviceId: device.deviceID, mutations: children, follows: follows))
                let (parentReply, childReply) = try await (first, second)
                #expect(try phone.auth.decode(parentReply, as: PushResponse.self).results.allSatisfy { $0.status == .applied })
                var childResults: [MutationResult]
                if childReply.status == 409 {
                    #expect(childReply.errorCode == "push_out_of_order")
                    refused += 1
                    let resent = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: children, follows: follows))
                    childResults = try phone.auth.decode(resent, as: PushResponse.self).results
                } else {
                    childResults = try phone.auth.decode(childReply, as: PushResponse.self).results
                }
                #expect(childResults.map(\.status) == [.applied], "round \(round): the child never arrives before its parent")
            }
            #expect(try await pad.pullAll().changes.count == 12 * 51)
            print("PushOrderTests.concurrentPairs(\(engine)): \(refused) of 12 second pushes arrived first and were sent again")
        }
    }

    /// A push sent behind another is planned before its transaction on the guess that its records are all new
    /// (``PlanGuess``, both engines); where the push before it stored them, the guess fails and the push is planned on the
    /// stored rows.
    @Test("a push following one that stored its records merges into them, with or without a delete; one of new records stores them all", arguments: TestEngine.available)
    func followingPushesPlannedOnTheStoredRows(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var pad = try await phone.sibling()
            let (kept, deleted) = (UUID(), UUID())
            let stored = [phone.upsert("sermons", kept, Self.sermon("One")), phone.upsert("sermons", deleted, Self.sermon("Two"))]
            let first = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: stored, follows: nil))
            #expect(try phone.auth.decode(first, as: PushResponse.self).results.map(\.status) == [.applied, .applied])

            // Behind it: a change to one record it stored (merged: the date stays), a delete of the other, a new one.
            let added = UUID()
            let edits = [
                phone.upsert("sermons", kept, ["title": "One, revised"]), phone.delete("sermons", deleted),
                phone.upsert("sermons", added, Self.sermon("Three")),
            ]
            let second = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: edits, follows: 2))
            #expect(try phone.auth.decode(second, as: PushResponse.self).results.map(\.status) == [.applied, .applied, .applied])

            // Behind that: new records only, the guess holding.
            let fresh = (0..<20).map { phone.upsert("sermons", Self.sermon("New \($0)").merging(["speaker": "Pastor John"]) { $1 }) }
            let third = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: fresh, follows: 5))
            let thirdReply = try phone.auth.decode(third, as: PushResponse.self)
            #expect(thirdReply.results.allSatisfy { $0.status == .applied } && thirdReply.lastMutationId == 25)

            // Behind that: changes to records it stored, which the guess takes for new; the insert finds them.
            let revised = (0..<5).map { phone.upsert("sermons", fresh[$0].id, Self.sermon("New \($0), revised")) }
            let fourth = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: revised, follows: 25))
            #expect(try phone.auth.decode(fourth, as: PushResponse.self).results.map(\.status) == Array(repeating: .applied, count: 5))

            let rows = latestRows(try await pad.pullAll().changes)
            #expect(rows.count == 23)
            #expect((0..<5).allSatisfy { rows[fresh[$0].id]?.fields["title"] == .string("New \($0), revised") })
            #expect(rows[fresh[0].id]?.fields["speaker"] == "Pastor John", "merged into the stored record")
            #expect(rows[kept]?.fields["title"] == "One, revised" && rows[kept]?.fields["date"] == "2026-11-21T10:00:00.000Z")
            #expect(rows[deleted]?.deleted == true)
            #expect(rows[added]?.fields["title"] == "Three")
            #expect(fresh.dropFirst(5).allSatisfy { rows[$0.id]?.fields["title"] == $0.fields["title"] })
            // The last push again, as a device sends it after losing the reply: its fingerprints were kept.
            let replay = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: revised, follows: nil))
            #expect(try phone.auth.decode(replay, as: PushResponse.self).results.allSatisfy { $0.status == .duplicate })
        }
    }
}
