import FerryCore
import Foundation
import Testing

/// Each sync message has one writer and one reader: what one writes, the other reads back whole, in the wire's
/// spelling (compact, keys sorted, lowercase ids).
@Suite("Wire coding: pull and push messages, one writer and one reader each")
struct WireCodingTests {
    static let space = UUID(uuidString: "0A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9")!
    static let clock = HLC(milliseconds: 1_763_900_000_123, counter: 7, node: "4f0c2a9e-1111-4222-8333-944445555666")

    static let change = Change(
        space: space, collection: "notes", id: UUID(), seq: 9_007_199_254_740_991,
        fields: ["text": .string("line \"one\"\nline\ttwo / ☕"), "n": .number(-2.5), "tags": .array([.string("a"), .null]),
                 "meta": .object(["z": .bool(false), "a": .object([:])]), "gone": .null],
        clocks: ["text": clock, "n": clock, RecordState.deletedKey: HLC(milliseconds: 1, counter: 0, node: "server")], deleted: false
    )

    /// The text `JSONValue` writes for the same JSON: compact, keys sorted. A writer's text must be exactly it.
    static func canonical(_ bytes: [UInt8]) throws -> String {
        var out: [UInt8] = []
        try JSONValue(parsing: bytes).write(into: &out)
        return text(out)
    }

    static func text(_ bytes: some Sequence<UInt8>) -> String { String(decoding: Array(bytes), as: UTF8.self) }

    @Test("a pull reply is written compact with sorted keys and read back whole")
    func pullResponse() throws {
        let response = PullResponse(
            changes: [Self.change, Change(space: Self.space, collection: "sermons", id: UUID(), seq: 1, fields: [:], clocks: [:], deleted: true)],
            cursors: [Self.space: 42, UUID(): 0], hasMore: true, resetRequired: [UUID()], keyVersions: [Self.space: 3]
        )
        let ours = JSONValueEncoder().encodeText(response)
        #expect(Self.text(ours) == (try Self.canonical(ours)))
        #expect(Self.text(ours).contains(#""space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9""#), "ids lowercase")
        #expect(try JSONValueDecoder().decode(PullResponse.self, from: ours) == response)
        let change = JSONValueEncoder().encodeText(Self.change)
        #expect(try JSONValueDecoder().decode(Change.self, from: change) == Self.change)
    }

    @Test("a pull is written compact with sorted keys, defaults left out, and read back whole; null and missing are defaults")
    func pullRequest() throws {
        let pull = PullRequest(cursors: [Self.space: 42, UUID(): 0], limit: 500, exclude: [UUID(), Self.space], clockForm: .row, layout: .rows)
        let ours = JSONValueEncoder().encodeText(pull)
        #expect(Self.text(ours) == (try Self.canonical(ours)))
        #expect(Self.text(ours).contains(#""0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9":42"#), "ids lowercase")
        #expect(try JSONValueDecoder().decode(PullRequest.self, from: ours) == pull)
        #expect(Self.text(JSONValueEncoder().encodeText(PullRequest())) == #"{"cursors":{}}"#)
        let nulls = #"{"cursors":null,"limit":null,"exclude":null,"clockForm":null,"layout":null,"later":[1]}"#
        #expect(try JSONValueDecoder().decode(PullRequest.self, from: Array(nulls.utf8)) == PullRequest())
        #expect(try JSONValueDecoder().decode(PullRequest.self, from: Array("{}".utf8)) == PullRequest())
        let twice = #"{"exclude":["0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9"],"exclude":[],"limit":5,"limit":null}"#
        #expect(try JSONValueDecoder().decode(PullRequest.self, from: Array(twice.utf8)) == PullRequest(), "the last counts, as in a tree")
        for wrong in [#"{"cursors":{"not-an-id":1}}"#, #"{"limit":1.5}"#, #"{"exclude":["x"]}"#, #"{"layout":"pages"}"#, #"{"cursors":[]}"#, "[]"] {
            #expect(throws: DecodingError.self, "\(wrong)") { try JSONValueDecoder().decode(PullRequest.self, from: Array(wrong.utf8)) }
        }
    }

    @Test("a push and its reply are written compact with sorted keys and read back whole")
    func pushRequest() throws {
        let push = PushRequest(deviceId: UUID(), mutations: [
            Mutation(mutationId: 1, space: Self.space, collection: "notes", id: UUID(), op: .upsert, fields: Self.change.fields, clocks: Self.change.clocks),
            Mutation(mutationId: 2, space: Self.space, collection: "notes", id: UUID(), op: .delete, clocks: [RecordState.deletedKey: Self.clock]),
        ], cursors: [Self.space: 7], follows: 0)
        let ours = JSONValueEncoder().encodeText(push)
        #expect(Self.text(ours) == (try Self.canonical(ours)))
        #expect(Self.text(ours).contains(#""deviceId":"\#(push.deviceId.uuidString.lowercased())""#), "ids lowercase")
        #expect(try JSONValueDecoder().decode(PushRequest.self, from: ours) == push)
        let older = PushRequest(deviceId: push.deviceId, mutations: push.mutations)
        #expect(!Self.text(JSONValueEncoder().encodeText(older)).contains("cursors"), "no cursors, no key: an older server reads it")
        #expect(!Self.text(JSONValueEncoder().encodeText(older)).contains("follows"), "a push sent alone names none")

        let reply = PushResponse(results: [
            MutationResult(mutationId: 1, status: .applied),
            MutationResult(mutationId: 2, status: .applied, clocks: ["title": Self.clock]),
            MutationResult(mutationId: 3, status: .rejected, code: "type_mismatch", message: "notes.rank: \"x\" is not an integer."),
            MutationResult(mutationId: 4, status: .duplicate),
        ], lastMutationId: 4, cursors: [Self.space: 8], maxInFlight: 2)
        let replyText = JSONValueEncoder().encodeText(reply)
        #expect(Self.text(replyText) == (try Self.canonical(replyText)))
        #expect(try JSONValueDecoder().decode(PushResponse.self, from: replyText) == reply)
        #expect(throws: DecodingError.self) {
            try JSONValueDecoder().decode(PushResponse.self, from: Data(#"{"results":[{"mutationId":1,"status":"lost"}],"lastMutationId":1}"#.utf8))
        }
        let fromOlderServer = #"{"results":[{"mutationId":1,"status":"applied"}],"lastMutationId":1}"#
        let olderReply = try JSONValueDecoder().decode(PushResponse.self, from: Data(fromOlderServer.utf8))
        #expect(olderReply.cursors.isEmpty && olderReply.maxInFlight == nil, "an older server takes one push at a time")
    }

    @Test("a mutation read from a store is written with the texts it was read from, until its fields or clocks change")
    func storedJSON() throws {
        let fresh = Mutation(mutationId: 1, space: Self.space, collection: "notes", id: UUID(), op: .upsert, fields: ["n": .number(1)], clocks: ["n": Self.clock])
        // Texts that parse to the same values but are not the encoder's spelling, so the test sees which one is written.
        let stored = Mutation.StoredJSON(fields: #"{ "n": 1.0 }"#, clocks: #"{ "n": "\#(Self.clock)" }"#)
        func read() -> Mutation {
            Mutation(mutationId: 1, space: fresh.space, collection: fresh.collection, id: fresh.id, op: .upsert, storedJSON: stored)
        }
        var edited = read()
        #expect(edited.fields == fresh.fields && edited.clocks == fresh.clocks && edited.state == fresh.state, "the texts read as the values")
        #expect(edited == fresh && edited.hashValue == fresh.hashValue && edited.parsed() == fresh && edited.parsed()?.storedJSON == nil)
        let damaged = Mutation(mutationId: 1, space: fresh.space, collection: "notes", id: fresh.id, op: .upsert, storedJSON: .init(fields: "{", clocks: "{}"))
        #expect(damaged.parsed() == nil && damaged.fields.isEmpty)
        let written = Self.text(JSONValueEncoder().encodeText(edited))
        #expect(written.contains(#""fields":{ "n": 1.0 }"#) && written.contains(#""clocks":{ "n": "\#(Self.clock)" }"#), "\(written)")
        #expect(try JSONValueDecoder().decode(Mutation.self, from: Data(written.utf8)) == fresh)

        edited.fields["title"] = .string("new")
        #expect(edited.storedJSON == nil && edited.fields == ["n": .number(1), "title": .string("new")] && edited.clocks == fresh.clocks)
        let afterEdit = Self.text(JSONValueEncoder().encodeText(edited))
        #expect(afterEdit.contains(#""title":"new""#) && !afterEdit.contains("1.0"), "a changed mutation is encoded again: \(afterEdit)")
        var reclocked = read()
        reclocked.clocks["n"] = HLC(milliseconds: 2, counter: 0, node: "server")
        #expect(reclocked.fields == fresh.fields)
        #expect(Self.text(JSONValueEncoder().encodeText(reclocked)).contains("000000000000002-00000-server"))
    }

    @Test("malformed messages fail with DecodingErrors naming where", arguments: [
        (#"{"deviceId":"x","mutations":[]}"#, "deviceId"),
        (#"{"deviceId":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9"}"#, ""),
        (#"{"deviceId":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","mutations":{}}"#, "mutations"),
        (#"{"deviceId":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","mutations":[{"mutationId":1.5}]}"#, "mutations.0.mutationId"),
        (#"{"deviceId":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","mutations":[{"mutationId":1,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","collection":"n","id":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","op":"merge"}]}"#, "mutations.0.op"),
        (#"{"deviceId":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","mutations":[{"mutationId":1,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","collection":"n","id":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","op":"upsert","clocks":{"a":"soon"}}]}"#, "mutations.0.clocks.a"),
    ])
    func malformed(_ text: String, path: String) throws {
        do {
            _ = try JSONValueDecoder().decode(PushRequest.self, from: Data(text.utf8))
            Issue.record("decoded \(text)")
        } catch let error as DecodingError {
            let context: DecodingError.Context? = switch error {
            case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context): context
            @unknown default: nil
            }
            #expect(context?.codingPath.map(\.stringValue).joined(separator: ".") == path, "\(error)")
        }
    }

    @Test("UUIDs are written lowercase and read in either case, as Foundation's text form")
    func uuids() throws {
        for _ in 0..<200 {
            let id = UUID()
            let json = JSONValueEncoder().encodeText(Change(space: id, collection: "c", id: id, seq: 0, fields: [:], clocks: [:], deleted: false))
            #expect(Self.text(json).contains("\"\(id.uuidString.lowercased())\""))
            let upper = Self.text(json).replacingOccurrences(of: id.uuidString.lowercased(), with: id.uuidString)
            #expect(try JSONValueDecoder().decode(Change.self, from: Data(upper.utf8)).id == id)
        }
    }

    @Test("a UUID in any Encodable reply is written lowercase too, not as Foundation's uppercase text")
    func encodableUUIDs() throws {
        let id = UUID(uuidString: "14574C4F-FED3-4C1D-9C55-3B1E2A5F0A11")!
        let member = Self.text(try JSONValueEncoder().encodeText(SpaceMember(email: "a@example.com", userId: id, role: .member)))
        #expect(member.contains("\"userId\":\"14574c4f-fed3-4c1d-9c55-3b1e2a5f0a11\""), "\(member)")
        let missing = Self.text(try JSONValueEncoder().encodeText([MissingSecret(spaceId: id, keyVersion: 1, deviceId: id, publicKey: "k")]))
        #expect(!missing.contains("14574C4F"), "\(missing)")
        #expect(try JSONValueDecoder().decode(SpaceMember.self, from: Data(member.utf8)).userId == id)
    }
}
