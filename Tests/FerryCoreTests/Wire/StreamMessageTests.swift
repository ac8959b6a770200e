import FerryCore
import Foundation
import Testing

/// The realtime stream's messages: one writer and one reader, a poke that carries its changes read back whole, and
/// anything malformed in what it carries leaving a plain poke, never a lost one.
@Suite("Stream messages")
struct StreamMessageTests {
    static let space = UUID(uuidString: "0A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9")!
    static let clock = HLC(milliseconds: 1_763_900_000_123, counter: 7, node: "4f0c2a9e-1111-4222-8333-944445555666")

    static var carried: CarriedChanges {
        let change = Change(
            space: space, collection: "notes", id: UUID(), seq: 12, fields: ["text": .string("a \"quoted\" ☕ line")],
            clocks: ["text": clock], deleted: false
        )
        return CarriedChanges(after: 10, pull: PullResponse(changes: [change], cursors: [space: 12], hasMore: false))
    }

    @Test("each message reads back as itself, with sorted keys")
    func roundTrip() throws {
        let messages: [StreamMessage] = [
            .ready(expiresAt: Date(timeIntervalSince1970: 1_800_000_000)), .ready(expiresAt: nil), .sync,
            .change(space: Self.space, seq: 9_007_199_254_740_991), .change(space: Self.space, seq: 12, carried: Self.carried),
        ]
        for message in messages {
            let text = message.jsonText
            #expect(StreamMessage(jsonText: text) == message, "\(text)")
            var canonical: [UInt8] = []
            try JSONValue(parsing: Array(text.utf8)).write(into: &canonical)
            #expect(String(decoding: canonical, as: UTF8.self) == text, "compact, keys sorted")
        }
        #expect(StreamMessage.change(space: Self.space, seq: 5).jsonText == #"{"seq":5,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#)
    }

    @Test("carried changes that cannot be read leave the poke", arguments: [
        #"{"after":10,"pull":{"changes":[{"nope":1}],"cursors":{},"hasMore":false},"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
        #"{"after":10,"pull":[],"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
        #"{"after":12,"pull":{"changes":[],"cursors":{},"hasMore":false},"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
        #"{"after":-1,"pull":{"changes":[],"cursors":{},"hasMore":false},"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
        #"{"pull":{"changes":[],"cursors":{},"hasMore":false},"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
        #"{"after":"10","pull":{"changes":[],"cursors":{},"hasMore":false},"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
        #"{"after":10.5,"seq":12,"space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","type":"change"}"#,
    ])
    func unreadableCarried(_ text: String) {
        #expect(StreamMessage(jsonText: text) == .change(space: Self.space, seq: 12))
    }

    @Test("an expiry of another kind leaves the ready message")
    func lenientExpiry() {
        #expect(StreamMessage(jsonText: #"{"expires_at":5,"type":"ready"}"#) == .ready(expiresAt: nil))
        #expect(StreamMessage(jsonText: #"{"expires_at":null,"type":"ready"}"#) == .ready(expiresAt: nil))
    }

    @Test("malformed messages and unknown types read as nothing", arguments: [
        "", "{", "[]", #"{"type":"change"}"#, #"{"type":"change","space":"x","seq":1}"#,
        #"{"type":"change","space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","seq":-1}"#,
        #"{"type":"change","space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","seq":1.5}"#,
        #"{"type":"change","space":"0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9","seq":9007199254740992}"#,
        #"{"type":"later"}"#, #"{"type":"sync"} x"#,
    ])
    func malformed(_ text: String) {
        #expect(StreamMessage(jsonText: text) == nil)
    }
}
