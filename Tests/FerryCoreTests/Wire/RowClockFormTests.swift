import FerryCore
import Foundation
import Testing

/// A pull reply's row form of clocks (`clockForm: "row"`): one `clock` for the fields that share it, `clocks` for the
/// rest, and every decoder reading back the same clocks as the field form carries.
@Suite("Wire coding: the row form of a change's clocks")
struct RowClockFormTests {
    static let space = UUID(uuidString: "0A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9")!
    static let writer = HLC(milliseconds: 1_763_900_000_123, counter: 7, node: "4f0c2a9e-1111-4222-8333-944445555666")
    static let other = HLC(milliseconds: 1_763_900_000_500, counter: 0, node: "9a0c2a9e-1111-4222-8333-944445555666")
    static let server = HLC(milliseconds: 1, counter: 0, node: "server")

    static func change(_ fields: [String: JSONValue], _ clocks: [String: HLC], deleted: Bool = false) -> Change {
        Change(space: space, collection: "notes", id: UUID(), seq: 12, fields: fields, clocks: clocks, deleted: deleted)
    }

    /// The reply's JSON in the row form: the objects of its changes, and what the reader reads back.
    static func roundTrip(_ changes: [Change]) throws -> (changes: [[String: JSONValue]], read: PullResponse) {
        var response = PullResponse(changes: changes, cursors: [space: 12], hasMore: false)
        response.clockForm = .row
        let text = JSONValueEncoder().encodeText(response)
        guard case .array(let items)? = try JSONValue(parsing: text).objectValue?["changes"] else { throw CocoaError(.coderReadCorrupt) }
        let objects = try items.map { try #require($0.objectValue) }
        return (objects, try JSONValueDecoder().decode(PullResponse.self, from: text))
    }

    @Test("a record written whole by one device carries one clock and no clocks; the reader reads the full clocks back")
    func oneWriter() throws {
        let change = Self.change(["title": "Grace", "body": "…", "rank": 3, "gone": .null], ["title": Self.writer, "body": Self.writer, "rank": Self.writer, "gone": Self.writer])
        let (objects, stream) = try Self.roundTrip([change])
        #expect(objects[0]["clock"] == .string(Self.writer.description))
        #expect(objects[0]["clocks"] == nil)
        for decoded in [stream] {
            #expect(decoded.changes == [change])
        }
        // A device keeps the clocks' text it stores: the text of exactly these clocks.
        let kept = try #require(stream.changes[0].clocksText)
        #expect(ClockMap.clocks(fromText: kept) == change.clocks)
    }

    @Test("clocks that differ from the one most fields share, and the tombstone's, stay in clocks")
    func exceptions() throws {
        let change = Self.change(
            ["title": "Grace", "body": "…", "rank": 3],
            ["title": Self.writer, "body": Self.other, "rank": Self.writer, RecordState.deletedKey: Self.server]
        )
        let (objects, stream) = try Self.roundTrip([change])
        #expect(objects[0]["clock"] == .string(Self.writer.description))
        #expect(objects[0]["clocks"] == .object(["body": .string(Self.other.description), RecordState.deletedKey: .string(Self.server.description)]))
        for decoded in [stream] {
            #expect(decoded.changes == [change])
        }
        #expect(ClockMap.clocks(fromText: try #require(stream.changes[0].clocksText)) == change.clocks)
    }

    @Test("a change with a field that has no clock, or with no field, keeps the field form")
    func fieldFormWhenNeeded() throws {
        let unclocked = Self.change(["title": "Grace", "added": 5], ["title": Self.writer])
        let tombstone = Self.change([:], [RecordState.deletedKey: Self.writer], deleted: true)
        let (objects, stream) = try Self.roundTrip([unclocked, tombstone])
        #expect(objects.allSatisfy { $0["clock"] == nil && $0["clocks"] != nil })
        for decoded in [stream] {
            #expect(decoded.changes == [unclocked, tombstone])
        }
    }

    @Test("the server's stored text, compact or in PostgreSQL's spaced form, is written in the row form as the parsed clocks are")
    func fromStoredText() throws {
        let fields: [String: JSONValue] = ["title": "Grace", "body": "…"]
        let clocks = ["title": Self.writer, "body": Self.other, RecordState.deletedKey: Self.server]
        let compact = ClockMap.text(clocks)
        let spaced = compact.replacingOccurrences(of: "\":\"", with: "\": \"").replacingOccurrences(of: "\",\"", with: "\", \"")
        var written: [[String: JSONValue]] = []
        for text in [compact, spaced] {
            let stored = Change(space: Self.space, collection: "notes", id: UUID(), seq: 3, fields: fields, clocksText: try #require(ClockMap.wireText(text)), deleted: false)
            let (objects, stream) = try Self.roundTrip([stored])
            #expect(stream.changes[0].clocks == clocks)
            written.append(objects[0].filter { $0.key == "clock" || $0.key == "clocks" })
        }
        #expect(written[0] == written[1])
        #expect(written[0]["clocks"]?.objectValue?.count == 2, "one of the two fields' clocks is the row clock; the other and _deleted remain")
    }

    @Test("the field form stays the default, and a pull asks for the row form by name")
    func request() throws {
        #expect(try JSONValue(parsing: JSONValueEncoder().encodeText(PullRequest(cursors: [:]))).objectValue?["clockForm"] == nil)
        let asked = JSONValueEncoder().encodeText(PullRequest(cursors: [:], clockForm: .row))
        #expect(try JSONValue(parsing: asked).objectValue?["clockForm"] == "row")
        #expect(try JSONValueDecoder().decode(PullRequest.self, from: asked).clockForm == .row)
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(PullRequest.self, from: Array(#"{"clockForm":"compact"}"#.utf8)) }
    }
}
