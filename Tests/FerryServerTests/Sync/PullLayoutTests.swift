import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The rows layout (`"layout": "rows"`) carries the same changes as the changes layout, in the same order.
@Suite("Sync: the rows layout of a pull")
struct PullLayoutTests {
    static let schema = """
        version: 1
        collections:
          notes:
            fields:
              title: text
              body: text
              rank: integer
              score: real
          tags:
            fields:
              name: { type: text, required: true }
        """

    @Test("every change, in order, page by page, as the changes layout has it; in fewer bytes", arguments: TestEngine.available)
    func sameChanges(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            var other = try await device.sibling()
            let shared = try await device.createSpace("Team")
            let (whole, partial, cleared, tag) = (UUID(), UUID(), UUID(), UUID())
            _ = try await device.push([
                device.upsert("notes", whole, ["title": "Whole \"quoted\" ☕", "body": "Line\nbreak", "rank": 3, "score": 2.5]),
                device.upsert("notes", partial, ["title": "Only a title"]),
                device.upsert("tags", tag, ["name": "urgent"]),
                device.upsert("notes", cleared, ["title": "Cleared", "body": "gone soon"]),
                device.upsert("notes", space: shared.id, ["title": "In the team space", "rank": -7]),
            ])
            // A later clock on one field (an exception to the row clock), a cleared field, a tombstone, interleaved
            // collections.
            _ = try await other.push([other.upsert("notes", whole, ["title": "Renamed elsewhere"])])
            _ = try await device.push([device.upsert("notes", cleared, ["body": .null]), device.delete("tags", tag)])
            _ = try await device.push([device.upsert("tags", ["name": "later"]), device.upsert("notes", ["title": "last"])])

            for limit in [2, 5000] {
                var changesReader = try await device.sibling(), rowsReader = try await device.sibling()
                let (byChanges, changesBytes) = try await Self.pullAll(&changesReader, limit: limit, layout: .changes)
                let (byRows, rowsBytes) = try await Self.pullAll(&rowsReader, limit: limit, layout: .rows)
                #expect(byRows.count == 7, "every record once (\(byRows.count))")
                #expect(byRows == byChanges, "limit \(limit)")
                #expect(byRows.map(\.seq) == byChanges.map(\.seq))
                #expect(rowsReader.cursors == changesReader.cursors)
                if limit == 5000 { #expect(rowsBytes < changesBytes, "\(rowsBytes) bytes against \(changesBytes)") }
            }
            let reader = try await device.sibling()
            let reply = try await reader.send("POST", "/sync/v1/pull", PullRequest(clockForm: .row, layout: .rows))
            let body = try #require(JSONValue(jsonText: String(decoding: reply.body, as: UTF8.self))?.objectValue)
            #expect(body["changes"] == nil)
            let pages = try #require(body["pages"]?.arrayValue)
            #expect(pages.count >= 3, "a page per run of one space and collection")
            let notes = try #require(pages.first { $0.objectValue?["collection"] == "notes" }?.objectValue)
            #expect(notes["columns"] == .array(["id", "seq", "deleted", "clock", "clocks", "title", "body", "rank", "score"]))
            let rows = pages.flatMap { $0.objectValue?["rows"]?.arrayValue ?? [] }.compactMap(\.arrayValue)
            let renamed = try #require(rows.first { $0.first == .string(whole.lowercasedText) })
            #expect(renamed.count == 9 && renamed[5] == "Renamed elsewhere" && renamed[6] == "Line\nbreak" && renamed[7] == 3)
            #expect(renamed[3].stringValue != nil, "a row clock")
            #expect(renamed[4].objectValue?.keys.sorted() == ["title"], "only the renamed field differs from the row clock")
            let emptied = try #require(rows.first { $0.first == .string(cleared.lowercasedText) })
            #expect(emptied[6] == .null && emptied[4].objectValue?["body"] != nil, "a cleared field is null, its clock in clocks")
        }
    }

    @Test("an unknown layout or clock form is refused with 400 bad_request naming it", arguments: TestEngine.available)
    func unknownLayout(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let device = try await SyncDevice.signUp(server)
            for (body, member) in [(#"{"cursors":{},"layout":"columns"}"#, "layout"), (#"{"layout":"rows","clockForm":"cell"}"#, "clockForm")] {
                let reply = try await device.auth.send("POST", "/sync/v1/pull", body: Data(body.utf8), token: device.session.accessToken)
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status == 400, "\(text)")
                #expect(text.contains("bad_request") && text.contains(member), "\(text)")
            }
        }
    }

    /// Pulls until nothing more waits, in `layout`; the changes, and the bytes of every reply.
    static func pullAll(_ device: inout SyncDevice, limit: Int, layout: PullLayout) async throws -> ([Change], Int) {
        var changes: [Change] = []
        var bytes = 0
        while true {
            let reply = try await device.send("POST", "/sync/v1/pull", PullRequest(cursors: device.cursors, limit: limit, clockForm: .row, layout: layout))
            #expect(reply.status == 200)
            bytes += reply.body.count
            let page = layout == .rows
                ? try RowsLayout.read(Array(reply.body)) : try JSONValueDecoder().decode(PullResponse.self, from: Array(reply.body))
            changes += page.changes
            device.cursors.merge(page.cursors) { _, new in new }
            if !page.hasMore { return (changes, bytes) }
        }
    }
}
