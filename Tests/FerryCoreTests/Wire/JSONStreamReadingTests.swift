@testable import FerryCore
import Foundation
import Testing

/// The sync messages' one reader (`JSONStreamReadable`) reads every form of JSON a client or server may send, and
/// refuses anything else with an error that says what and where.
@Suite("Wire: stream reading")
struct JSONStreamReadingTests {
    static let space = "0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9"
    static let record = "1b2c3d4e-5f60-4182-93a4-b5c6d7e8f9a0"
    static let clock = "001763900000123-00007-4f0c2a9e-1111-4222-8333-944445555666"

    /// The value read from `text`; written again by the message's writer, it reads back the same.
    @discardableResult
    func read<Value: JSONStreamReadable & JSONTextWritable & Equatable>(_ type: Value.Type, _ text: String) throws -> Value {
        let value = try JSONValueDecoder().decode(type, from: Array(text.utf8))
        #expect(try JSONValueDecoder().decode(type, from: JSONValueEncoder().encodeText(value)) == value, "\(text)")
        return value
    }

    @Test("a push as the SDK writes it is read by the stream reader, with what the tree reads", arguments: [
        #"{"cursors":{"\#(space)":7},"deviceId":"\#(record)","mutations":[{"clocks":{"a":"\#(clock)","b":"\#(clock)"},"collection":"notes","fields":{"a":"x","b":[1,{"c":null}]},"id":"\#(record)","mutationId":1,"op":"upsert","space":"\#(space)"}]}"#,
        #" { "mutations" : [ ] , "deviceId" : "\#(record)" } "#,
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":2,"space":"\#(space)","collection":"n","id":"\#(record)","op":"delete","fields":null,"clocks":null,"later":{"x":[true]}}],"cursors":null}"#,
        #"{"deviceId":"\#(record)","deviceId":"\#(space)","mutations":[]}"#,
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":3,"space":"\#(space)","collection":"n\u00e9","id":"\#(record)","op":"upsert","clocks":{"t":"\u0030\#(String(clock.dropFirst()))"}}]}"#,
        // Ids read from their bytes, in either case, and an escaped id read as a string.
        #"{"deviceId":"\#(record.uppercased())","mutations":[{"mutationId":5,"space":"\u0030\#(String(space.dropFirst()))","collection":"n","id":"\#(record.uppercased())","op":"delete","clocks":{"_deleted":"\#(clock)"}}]}"#,
        // Repeated clocks are read once: the same bytes again, other bytes of the same length, an escaped form of them.
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":4,"space":"\#(space)","collection":"n","id":"\#(record)","op":"upsert","clocks":{"a":"\#(clock)","b":"\#(clock)","c":"\#(clock.replacingOccurrences(of: "00007", with: "00008"))","d":"\#(clock)","e":"\u0030\#(String(clock.dropFirst()))","f":"\#(clock)","g":"\#(clock.replacingOccurrences(of: "4f0c", with: "5f0c"))"}}]}"#,
    ])
    func pushes(_ text: String) throws {
        let push = try read(PushRequest.self, text)
        // A repeated key: the last one wins, as in any JSON object.
        if text.contains(#""deviceId":"\#(Self.space)""#) { #expect(push.deviceId.uuidString.lowercased() == Self.space) }
    }

    @Test("a mutation keeps its clocks' text only when it is exactly what ClockMap writes for them", arguments: [
        (#"{"a":"\#(clock)","b":"\#(clock)"}"#, true),
        (#"{}"#, true),
        (#"{"b":"\#(clock)","a":"\#(clock)"}"#, false),
        (#"{"a":"\#(clock)","a":"\#(clock)"}"#, false),
        (#"{"a": "\#(clock)"}"#, false),
        (#"{"a":"\u0030\#(String(clock.dropFirst()))"}"#, false),
        (#"{"\u0061":"\#(clock)"}"#, false),
        (#"{"é":"\#(clock)"}"#, false),
    ])
    func receivedClocksText(_ clocks: String, kept: Bool) throws {
        let text = #"{"mutationId":1,"space":"\#(Self.space)","collection":"n","id":"\#(Self.record)","op":"upsert","clocks":\#(clocks)}"#
        var mutation = try Array(text.utf8).withUnsafeBufferPointer { try JSONTextParser.read(Mutation.self, from: $0) }
        #expect(mutation.receivedClocksText == (kept ? clocks : nil))
        if kept { #expect(ClockMap.text(mutation.clocks) == clocks) }
        mutation.clocks["c"] = mutation.clocks["a"]
        #expect(mutation.receivedClocksText == nil, "a change to the clocks drops the text")
    }

    @Test("a pull reply is read by the stream reader, with what the tree reads", arguments: [
        #"{"changes":[{"clocks":{"title":"\#(clock)"},"collection":"notes","deleted":false,"fields":{"title":"T","rank":3.5},"id":"\#(record)","seq":9,"space":"\#(space)"}],"cursors":{"\#(space)":9},"hasMore":true,"keyVersions":{},"resetRequired":[]}"#,
        #"{"changes":[],"cursors":{},"hasMore":false}"#,
        #"{"changes":[],"cursors":{"\#(space)":1},"hasMore":false,"resetRequired":["\#(space)"],"keyVersions":{"\#(space)":2},"extra":1}"#,
    ])
    func pulls(_ text: String) throws {
        try read(PullResponse.self, text)
    }

    @Test("a push reply is read by the stream reader, with what the tree reads", arguments: [
        #"{"cursors":{"\#(space)":8},"lastMutationId":4,"maxInFlight":3,"results":[{"mutationId":1,"status":"applied"},{"clocks":{"t":"\#(clock)"},"mutationId":2,"status":"applied"},{"code":"type_mismatch","message":"notes.rank: \"x\"","mutationId":3,"status":"rejected"},{"mutationId":4,"status":"duplicate"}]}"#,
        #"{"results":[{"mutationId":1,"status":"applied","code":null,"message":null,"clocks":null,"later":[1]}],"lastMutationId":1}"#,
        #" { "results" : [ ] , "lastMutationId" : 0 , "cursors" : null , "maxInFlight" : null } "#,
        #"{"results":[],"lastMutationId":7,"maxInFlight":99999999999999}"#,
    ])
    func pushReplies(_ text: String) throws {
        try read(PushResponse.self, text)
    }

    @Test("a push reply of the wrong shape, or not JSON, is refused with an error", arguments: [
        #"{"results":[{"mutationId":1,"status":"lost"}],"lastMutationId":1}"#,
        #"{"results":[{"status":"applied"}],"lastMutationId":1}"#,
        #"{"results":[{"mutationId":1,"status":"applied","clocks":{"t":"soon"}}],"lastMutationId":1}"#,
        #"{"results":[],"lastMutationId":1,"cursors":{"not a space":1}}"#,
        #"{"results":[]}"#,
        #"{"results":[],"lastMutationId":1} x"#,
    ])
    func refusedReplies(_ text: String) {
        refusedByStream(PushResponse.self, text)
    }

    @Test("a push of the wrong shape, or not JSON, is refused with an error", arguments: [
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":1.5}]}"#,
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":1,"space":"\#(space)","collection":"n","id":"\#(record)","op":"merge"}]}"#,
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":1,"space":"\#(space)","collection":"n","id":"\#(record)","op":"upsert","clocks":{"a":"soon"}}]}"#,
        #"{"deviceId":"\#(record)","mutations":[]"#,
        #"{"deviceId":"\#(record)","mutations":[]} x"#,
        #"{"deviceId":"\#(record)","mutations":[{"mutationId":9007199254740992,"space":"\#(space)","collection":"n","id":"\#(record)","op":"upsert"}]}"#,
        #"{"deviceId":"\#(record)","mutations":[],"cursors":{"not a space":1}}"#,
        #"{"deviceId":"\#(record.replacingOccurrences(of: "-", with: "x"))","mutations":[]}"#,
        #"{"deviceId":"\#(record)\"","mutations":[]}"#,
        String(repeating: "[", count: 100),
    ])
    func refused(_ text: String) {
        refusedByStream(PushRequest.self, text)
    }

    @Test("a member no reader knows is skipped when the tree would parse it, and refused when it would not", arguments: [
        #"{"a":[1,{"b":"c","b":[true,false,null]},-0.5e3],"d":{}}"#, #"[]"#, #"{}"#, #""plain""#, #""\u00e9\n\"""#,
        #""é ü""#, #"  { "x" : [ 1 , 2 ] }  "#, "1e999", "01", "[1,]", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, #""\x""#,
        "\"tab\there\"", #""unterminated"#, "[", "{", "nul", "[1 2]", #"{"a":1 "b":2}"#, #""\ud800""#,
        String(repeating: "[", count: 63) + String(repeating: "]", count: 63),
        String(repeating: "[", count: 64) + String(repeating: "]", count: 64),
        String(repeating: "{\"a\":", count: 64) + "1" + String(repeating: "}", count: 64),
    ])
    func skippedMember(_ value: String) {
        let message = #"{"type":"sync","later":\#(value)}"#
        let tree = (try? JSONValue(parsing: Array(message.utf8))) != nil
        #expect((StreamMessage(jsonText: message) == .sync) == tree, "\(value)")
    }

    @Test("a member whose string is not UTF-8 is refused, as the tree refuses it")
    func skippedInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xFF, 0x22], [0x22, 0x61, 0xE2, 0x82, 0x22]] {
            #expect((try? JSONValue(parsing: bytes)) == nil)
            let asValue = Array(#"{"type":"sync","later":"#.utf8) + bytes + [0x7D]
            let asKey = Array(#"{"type":"sync","later":{"#.utf8) + bytes + Array(":1}}".utf8)
            for message in [asValue, asKey] {
                #expect(message.withUnsafeBufferPointer { StreamMessage.read($0, carrying: false) } == nil, "\(message)")
            }
        }
        #expect(StreamMessage(jsonText: #"{"type":"sync","later":{"\x":1}}"#) == nil, "a key's bad escape")
        #expect(StreamMessage(jsonText: #"{"type":"sync","later":{"\u00e9":[{"é":"\n"}]}}"#) == .sync, "a key's good one")
    }

    @Test("a cancelled task stops skipping a long member no reader knows, even one of strings only")
    func skippingCancellation() async throws {
        let strings = Array(repeating: #""a""#, count: 200_000).joined(separator: ",")
        let long = Array(#"{"deviceId":"\#(Self.record)","mutations":[],"later":[\#(strings)]}"#.utf8)
        #expect(try JSONValueDecoder().decode(PushRequest.self, from: long).mutations.isEmpty)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try JSONValueDecoder().decode(PushRequest.self, from: long)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    /// Reading `text` fails with a `DecodingError` (the wrong shape, with its path) or a `JSONParseError` (not JSON).
    func refusedByStream<Value: JSONStreamReadable>(_ type: Value.Type, _ text: String) {
        do {
            _ = try JSONValueDecoder().decode(type, from: Array(text.utf8))
            Issue.record("read \(text)")
        } catch {
            #expect(error is DecodingError || error is JSONParseError, "\(error)")
        }
    }
}
