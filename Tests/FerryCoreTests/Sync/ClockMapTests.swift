import FerryCore
import Foundation
import Testing

@Suite("ClockMap: the text of a record's clocks")
struct ClockMapTests {
    static let title = HLC(milliseconds: 1_790_000_000_123, counter: 7, node: "3f2a9c1e-0000-4000-8000-00000000abcd")
    static let deleted = HLC(milliseconds: 1_790_000_000_500, counter: 0, node: "server")

    @Test("writes JSON with sorted keys, the same text JSONEncoder wrote before, and reads it back")
    func roundTrip() throws {
        let clocks = ["title": Self.title, "_deleted": Self.deleted, "body": Self.title]
        let text = ClockMap.text(clocks)
        #expect(text == #"{"_deleted":"\#(Self.deleted)","body":"\#(Self.title)","title":"\#(Self.title)"}"#)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(text == String(decoding: try encoder.encode(clocks), as: UTF8.self), "stored text keeps its format")
        #expect(ClockMap.clocks(fromText: text) == clocks)
        #expect(ClockMap.text([:]) == "{}")
        #expect(ClockMap.clocks(fromText: "{}") == [:])
    }

    @Test("reads any JSON object of clocks: whitespace and escapes go through JSONDecoder")
    func otherWriters() {
        #expect(ClockMap.clocks(fromText: "{ \"title\" : \"\(Self.title)\" }") == ["title": Self.title])
        let odd = "ti\"tle\\\n"
        let text = ClockMap.text([odd: Self.title])
        #expect(text.contains(#"\""#), "a quote in a key is escaped")
        #expect(ClockMap.clocks(fromText: text) == [odd: Self.title])
        #expect(ClockMap.clocks(fromText: #"{"title":"\u0030\#(String(Self.title.description.dropFirst()))"}"#) == ["title": Self.title])
    }

    @Test("reads PostgreSQL's jsonb output, a space after each colon and comma, as the text it stores")
    func jsonbOutput() {
        let text = #"{"_deleted": "\#(Self.deleted)", "body": "\#(Self.title)", "title": "\#(Self.title)"}"#
        #expect(ClockMap.clocks(fromText: text) == ["title": Self.title, "_deleted": Self.deleted, "body": Self.title])
        #expect(ClockMap.clocks(fromText: #"{"a": "\#(Self.title)", "b": "nope"}"#) == nil)
        #expect(ClockMap.clocks(fromText: #"{"a":  "\#(Self.title)" }"#) == ["a": Self.title], "other spacing goes the full parser's way")
    }

    @Test("clocks of one writer share its node; a node one byte apart, or not a node, is read as itself")
    func sharedNodes() {
        let near = HLC(milliseconds: 1, counter: 2, node: "3f2a9c1e-0000-4000-8000-00000000abce")
        let clocks = ["a": Self.title, "b": near, "c": Self.title, "d": Self.deleted, "e": Self.deleted]
        #expect(ClockMap.clocks(fromText: ClockMap.text(clocks)) == clocks)
        let longer = String(Self.title.description.dropLast(4)) + "abcd!"
        #expect(ClockMap.clocks(fromText: #"{"a":"\#(Self.title)","b":"\#(longer)"}"#) == nil, "a node is checked even after another")
    }

    @Test("anything but an object of clocks is nil", arguments: [
        "", "{", "}", "[]", "null", #"{"title":1}"#, #"{"title":"not a clock"}"#, #"{"title":"\#(title)""#,
        #"{"title":"\#(title)"}x"#, #"{"title""\#(title)"}"#, #"{"a":"\#(title)","b":"nope"}"#,
    ])
    func malformed(_ text: String) {
        #expect(ClockMap.clocks(fromText: text) == nil, "\(text)")
    }
}
