import FerryCore
import Foundation
import Testing

/// The server stores a record's clocks with a row clock (`ClockMap.storedText`) and reads them back expanded
/// (`ClockMap.expandingStored`): every state must come back as it went in.
@Suite("Clocks in the stored form")
struct StoredClockFormTests {
    static let a = HLC(milliseconds: 1_700_000_000_000, counter: 1, node: "device-a")
    static let b = HLC(milliseconds: 1_700_000_000_001, counter: 0, node: "device-b")
    static let c = HLC(milliseconds: 1_700_000_000_002, counter: 7, node: "device-c")

    struct State: CustomTestStringConvertible, Sendable {
        var label: String
        var fields: [String: JSONValue]
        var clocks: [String: HLC]
        /// The stored text expected, when it is worth pinning.
        var stored: String?
        var testDescription: String { label }
    }

    static let states: [State] = [
        State(label: "written whole by one device", fields: ["title": "t", "body": "b", "rank": 3], clocks: ["title": a, "body": a, "rank": a],
              stored: #"{"*":"\#(a)"}"#),
        State(label: "one field edited later", fields: ["title": "t", "body": "b", "rank": 3], clocks: ["title": b, "body": a, "rank": a],
              stored: #"{"*":"\#(a)","title":"\#(b)"}"#),
        State(label: "a cleared field keeps its own clock, even the row clock's", fields: ["title": "t", "body": .null], clocks: ["title": a, "body": a],
              stored: #"{"*":"\#(a)","body":"\#(a)"}"#),
        State(label: "an undeleted record keeps _deleted", fields: ["title": "t"], clocks: ["title": a, "_deleted": a],
              stored: #"{"*":"\#(a)","_deleted":"\#(a)"}"#),
        State(label: "a tombstone: flat", fields: [:], clocks: ["_deleted": b], stored: #"{"_deleted":"\#(b)"}"#),
        State(label: "a value without a clock: flat", fields: ["title": "t", "added": 1], clocks: ["title": a], stored: #"{"title":"\#(a)"}"#),
        State(label: "a clock of a field no longer in the collection", fields: ["title": "t"], clocks: ["title": a, "gone": b],
              stored: #"{"*":"\#(a)","gone":"\#(b)"}"#),
        State(label: "a tie goes to the earliest clock", fields: ["x": 1, "y": 2, "z": 3, "w": 4], clocks: ["x": c, "y": c, "z": b, "w": b],
              stored: #"{"*":"\#(b)","x":"\#(c)","y":"\#(c)"}"#),
        State(label: "only cleared fields", fields: ["title": .null], clocks: ["title": a], stored: #"{"title":"\#(a)"}"#),
        State(label: "nothing", fields: [:], clocks: [:], stored: "{}"),
    ]

    @Test("the stored text reads back as the same clocks", arguments: states)
    func roundTrip(_ state: State) throws {
        let text = ClockMap.storedText(state.clocks, fields: state.fields)
        if let stored = state.stored { #expect(text == stored) }
        let parsed = try #require(ClockMap.clocks(fromText: text))
        #expect(ClockMap.expandingStored(parsed, fields: state.fields) == state.clocks)
        #expect(ClockMap.wireText(text) == (parsed[ClockMap.rowClockKey] == nil ? text : nil), "a row clock is never sent as it is stored")
    }

    @Test("the row clock covers only fields with a value and no clock of their own")
    func expansionRule() {
        let clocks: [String: HLC] = [ClockMap.rowClockKey: Self.a, "body": Self.b]
        let fields: [String: JSONValue] = ["title": "t", "body": "b", "empty": .null]
        #expect(ClockMap.expandingStored(clocks, fields: fields) == ["title": Self.a, "body": Self.b])
        #expect(ClockMap.expandingStored(["title": Self.a], fields: fields) == ["title": Self.a], "flat clocks read as they are")
    }
}
