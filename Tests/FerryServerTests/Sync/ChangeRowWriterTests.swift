@testable import FerryServer
import FerryCore
import Foundation
import Testing

/// The server writes pull replies from its rows with `ChangeRowWriter`; a device reads them as `Change`s. Both
/// writers must give the same bytes for the same row, in both clock forms.
@Suite("A change written from a row's cells")
struct ChangeRowWriterTests {
    static let space = UUID(uuidString: "3F2504E0-4F89-41D3-9A0C-0305E82C3301")!
    static let id = UUID(uuidString: "A1B2C3D4-0000-4000-8000-00000000BEEF")!
    static let clockA = "001700000000000-00001-device-a"
    static let clockB = "001700000000001-00000-device-b"

    /// One row: its clock column's text and each field's value (`nil`: the column is NULL).
    struct Row: CustomTestStringConvertible, Sendable {
        var label: String
        var clocks: String
        var values: [String: JSONValue?]
        var deleted = false
        var testDescription: String { label }
    }

    static let fields = ["title", "body", "rank", "Zeta", "émoji", "done"]

    static let rows: [Row] = [
        Row(label: "one clock for every field", clocks: #"{"body":"\#(clockA)","done":"\#(clockA)","rank":"\#(clockA)","title":"\#(clockA)"}"#,
            values: ["title": .string("Note"), "body": .string("Body \"quoted\" \\ and\nnew line"), "rank": .number(3), "done": .bool(true)]),
        Row(label: "PostgreSQL's spaced jsonb output, keys by length", clocks: #"{"body": "\#(clockA)", "rank": "\#(clockB)", "title": "\#(clockA)"}"#,
            values: ["title": .string("café ☕"), "body": .string(""), "rank": .number(-2.5)]),
        Row(label: "a cleared field keeps its clock and is null", clocks: #"{"body":"\#(clockB)","title":"\#(clockA)"}"#,
            values: ["title": .string("t"), "body": nil]),
        Row(label: "a value without a clock: field form", clocks: #"{"title":"\#(clockA)"}"#,
            values: ["title": .string("t"), "rank": .number(1)]),
        Row(label: "a clock for a field no longer in the collection", clocks: #"{"gone":"\#(clockB)","title":"\#(clockA)"}"#,
            values: ["title": .string("t")]),
        Row(label: "a tombstone: only _deleted's clock", clocks: #"{"_deleted":"\#(clockB)"}"#, values: [:], deleted: true),
        Row(label: "no clocks at all", clocks: "{}", values: ["Zeta": .number(9_007_199_254_740_993)]),
        Row(label: "names that sort by code point", clocks: #"{"Zeta":"\#(clockA)","émoji":"\#(clockA)","title":"\#(clockB)"}"#,
            values: ["Zeta": .number(1e-7), "émoji": .string("😀"), "title": .string("\u{01}")]),
    ]

    @Test("writes what Change writes", arguments: rows, [ClockForm.field, .row])
    func matchesChange(_ row: Row, form: ClockForm) throws {
        let writer = ChangeRowWriter(collection: "notes", fields: Self.fields, clockForm: form)
        let written = try #require(Self.write(row, with: writer))
        let change = try Self.change(row)
        var expected: [UInt8] = []
        change.writeJSON(into: &expected, clockForm: form)
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        let decoded = try JSONValueDecoder().decode(Change.self, from: Data(written))
        #expect(decoded == change)
    }

    @Test("a row of the rows layout reads back as the same change, and Change writes the same row", arguments: rows, [ClockForm.field, .row])
    func rowsLayout(_ row: Row, form: ClockForm) throws {
        let writer = ChangeRowWriter(collection: "notes", fields: Self.fields, clockForm: form, layout: .rows)
        let written = try #require(Self.write(row, with: writer))
        let change = try Self.change(row)
        var fromChange: [UInt8] = []
        change.writeRow(into: &fromChange, with: writer)
        #expect(String(decoding: fromChange, as: UTF8.self) == String(decoding: written, as: UTF8.self))

        let columns = JSONValue.array(writer.rowColumns.map(JSONValue.string)).jsonText
        let reply = #"{"pages":[{"space":"\#(Self.space.lowercasedText)","collection":"notes","columns":\#(columns),"rows":["#
            + String(decoding: written, as: UTF8.self) + #"]}],"cursors":{},"hasMore":false}"#
        #expect(try RowsLayout.read(Array(reply.utf8)).changes == [change])
    }

    @Test("clocks stored with a row clock pull as the same change, in both layouts and forms", arguments: rows, [ClockForm.field, .row])
    func storedForm(_ row: Row, form: ClockForm) throws {
        let change = try Self.change(row)
        let stored = ClockMap.storedText(change.clocks, fields: row.values.compactMapValues { $0 })
        let storedRow = Row(label: row.label, clocks: stored, values: row.values, deleted: row.deleted)
        let writer = ChangeRowWriter(collection: "notes", fields: Self.fields, clockForm: form)
        let written = try #require(Self.write(storedRow, with: writer))
        #expect(try JSONValueDecoder().decode(Change.self, from: Data(written)) == change)
        #expect(!String(decoding: written, as: UTF8.self).contains(#""*""#))
        if form == .field {
            // Expanded, the clocks are written as Change writes its parsed clocks: every one, keys in order.
            let parsed = Change(space: change.space, collection: "notes", id: change.id, seq: change.seq, fields: change.fields, clocks: change.clocks, deleted: change.deleted)
            var expected: [UInt8] = []
            parsed.writeJSON(into: &expected, clockForm: .field)
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }

        let rowsWriter = ChangeRowWriter(collection: "notes", fields: Self.fields, clockForm: form, layout: .rows)
        let row = try #require(Self.write(storedRow, with: rowsWriter))
        #expect(!String(decoding: row, as: UTF8.self).contains(#""*""#))
        let columns = JSONValue.array(rowsWriter.rowColumns.map(JSONValue.string)).jsonText
        let reply = #"{"pages":[{"space":"\#(Self.space.lowercasedText)","collection":"notes","columns":\#(columns),"rows":["#
            + String(decoding: row, as: UTF8.self) + #"]}],"cursors":{},"hasMore":false}"#
        #expect(try RowsLayout.read(Array(reply.utf8)).changes == [change])
        if form == .row, stored == #"{"*":"\#(Self.clockA)"}"# {
            // A record written whole: its row clock alone, as stored.
            #expect(String(decoding: row, as: UTF8.self).contains(#","\#(Self.clockA)",null,"#))
        }
    }

    @Test("a rows-layout reply without rows or columns, with other columns, or with a short row is refused", arguments: [
        #"{"space":"\#(space.lowercasedText)","collection":"notes","columns":["id","seq","deleted","clock","clocks","title"]}"#,
        #"{"space":"\#(space.lowercasedText)","collection":"notes","rows":[]}"#,
        #"{"space":"\#(space.lowercasedText)","collection":"notes","columns":["id","seq","clock","clocks","deleted"],"rows":[]}"#,
        #"{"space":"\#(space.lowercasedText)","collection":"notes","columns":["id","seq","deleted","clock","clocks","a","a"],"rows":[]}"#,
        #"{"space":"\#(space.lowercasedText)","collection":"notes","columns":["id","seq","deleted","clock","clocks","title"],"rows":[["\#(id.lowercasedText)",1,false,null,{}]]}"#,
        #"{"space":"\#(space.lowercasedText)","collection":"notes","columns":["id","seq","deleted","clock","clocks","title"],"rows":{}}"#,
    ])
    func refusesMalformedPages(_ page: String) {
        let reply = #"{"pages":["# + page + #"],"cursors":{},"hasMore":false}"#
        #expect(throws: DecodingError.self) { try RowsLayout.read(Array(reply.utf8)) }
    }

    /// What `writer` writes for `row` (its values as cells, `nil` for NULL); `nil` when it refuses the row.
    static func write(_ row: Row, with writer: ChangeRowWriter) -> [UInt8]? {
        var written: [UInt8] = []
        let accepted = Array(row.clocks.utf8).withUnsafeBytes { clocks in
            writer.write(
                id: id, space: space, seq: 42, deleted: row.deleted, clocks: clocks,
                isNull: { (row.values[fields[$0]] ?? nil) == nil },
                writeValue: { index, bytes in (row.values[fields[index]] ?? nil)?.write(into: &bytes) }, into: &written
            )
        }
        return accepted ? written : nil
    }

    /// The change a ``Change`` holds for `row`: a field is in it when it has a value or a clock.
    static func change(_ row: Row) throws -> Change {
        let clocked = try #require(ClockMap.clocks(fromText: row.clocks))
        var fields: [String: JSONValue] = [:]
        for name in Self.fields {
            if let value = row.values[name] ?? nil {
                fields[name] = value
            } else if clocked[name] != nil {
                fields[name] = .null
            }
        }
        return Change(space: Self.space, collection: "notes", id: Self.id, seq: 42, fields: fields, clocksText: try #require(ClockMap.wireText(row.clocks)), deleted: row.deleted)
    }

    @Test("refuses clocks a reply cannot carry as they are, writing nothing", arguments: [
        #"{"title":"not a clock"}"#, #"{"title":1}"#, #"{"title":"\#(clockA)","title":"\#(clockB)"}"#, #"{ "title":"\#(clockA)"}"#,
        #"{"ti\"tle":"\#(clockA)"}"#, "[]", "", "{",
    ])
    func refusesOtherClockText(_ clocks: String) {
        let writer = ChangeRowWriter(collection: "notes", fields: ["title"], clockForm: .row)
        var written: [UInt8] = Array("[".utf8)
        let accepted = Array(clocks.utf8).withUnsafeBytes { text in
            writer.write(
                id: Self.id, space: Self.space, seq: 1, deleted: false, clocks: text, isNull: { _ in false },
                writeValue: { _, bytes in JSONValue.string("t").write(into: &bytes) }, into: &written
            )
        }
        #expect(!accepted)
        #expect(written == Array("[".utf8))
    }
}
