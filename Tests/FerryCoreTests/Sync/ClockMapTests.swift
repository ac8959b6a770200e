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

    @Test("a value read as a repeat of the one before only when it is those bytes, whole: a prefix or an extension is read as itself")
    func repeatedValues() throws {
        let title = Self.title.description
        let extended = HLC(milliseconds: Self.title.milliseconds, counter: Self.title.counter, node: Self.title.node + "e")
        let shortened = HLC(milliseconds: Self.title.milliseconds, counter: Self.title.counter, node: String(Self.title.node.dropLast()))
        let clocks = ["a": Self.title, "b": Self.title, "c": extended, "d": shortened, "e": shortened, "f": Self.title]
        let text = ClockMap.text(clocks)
        #expect(ClockMap.clocks(fromText: text) == clocks)
        #expect(ClockMap.wireText(text) == text)
        #expect(ClockMap.clocks(fromText: #"{"a":"\#(title)","b":"\#(title)"x}"#) == nil, "the repeat is followed by its closing quote, then JSON")
        #expect(ClockMap.clocks(fromText: #"{"a":"\#(title)","b":"\#(title)"#) == nil, "a repeat cut short is no value")
        #expect(ClockMap.clocks(fromText: #"{"a":"\#(title)","b":"\#(title)\\"}"#) == nil, "nor one an escape follows")
    }

    @Test("anything but an object of clocks is nil", arguments: [
        "", "{", "}", "[]", "null", #"{"title":1}"#, #"{"title":"not a clock"}"#, #"{"title":"\#(title)""#,
        #"{"title":"\#(title)"}x"#, #"{"title""\#(title)"}"#, #"{"a":"\#(title)","b":"nope"}"#,
    ])
    func malformed(_ text: String) {
        #expect(ClockMap.clocks(fromText: text) == nil, "\(text)")
    }

    @Test("the text a pull reply may copy as it is: compact or jsonb-spaced, distinct keys, every value a clock")
    func wireText() throws {
        let compact = ClockMap.text(["title": Self.title, "_deleted": Self.deleted, "body": Self.title])
        #expect(ClockMap.wireText(compact) == compact)
        let jsonb = #"{"body": "\#(Self.title)", "title": "\#(Self.title)", "_deleted": "\#(Self.deleted)"}"#
        #expect(ClockMap.wireText(jsonb) == jsonb, "jsonb's key order and spaces are still JSON a device reads")
        #expect(ClockMap.wireText("{}") == "{}")
        for refused in [
            #"{"title":"\#(Self.title)","title":"\#(Self.deleted)"}"#,  // a key twice: readers disagree on which wins
            #"{"title":"\#(Self.title)","body":"nope"}"#,  // not a clock: the parser drops it
            #"{"ti\"tle":"\#(Self.title)"}"#, #"{ "title":"\#(Self.title)"}"#, #"{"title":1}"#, "", "[]",
        ] {
            #expect(ClockMap.wireText(refused) == nil, "\(refused)")
        }
        let change = Change(space: UUID(), collection: "notes", id: UUID(), seq: 3, fields: ["title": "x"], clocksText: jsonb, deleted: false)
        let parsed = Change(space: change.space, collection: "notes", id: change.id, seq: 3, fields: ["title": "x"], clocks: try #require(ClockMap.clocks(fromText: jsonb)), deleted: false)
        #expect(change == parsed && change.hashValue == parsed.hashValue && change.clocks.count == 3)
        let written = try JSONValueEncoder().encodeText(change)
        #expect(String(decoding: written, as: UTF8.self).contains(#""clocks":\#(jsonb)"#), "written as it is")
        #expect(try JSONValueDecoder().decode(Change.self, from: Data(written)) == parsed, "and read back as the same change")
    }

    @Test("a field has a clock in wire text only as a key: a node or a longer key with its name does not count")
    func hasClock() throws {
        let node = HLC(milliseconds: 1, counter: 0, node: "done")
        let text = try #require(ClockMap.wireText(#"{"done_at": "\#(node)", "title":"\#(node)"}"#))
        #expect(ClockMap.hasClock("title", inWireText: text))
        #expect(ClockMap.hasClock("done_at", inWireText: text))
        #expect(!ClockMap.hasClock("done", inWireText: text))
        #expect(!ClockMap.hasClock("itle", inWireText: text))
        #expect(!ClockMap.hasClock("body", inWireText: "{}"))
    }
}
