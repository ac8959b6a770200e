import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// A record's `_clocks` column is the stored form `ClockMap.storedText` writes (a row clock, `*`, for the fields that
/// share it), whatever form of JSON the push spelled its clocks in.
@Suite("Sync: clocks stored in one form")
struct StoredClocksTests {
    static let schema = """
        collections:
          notes:
            fields:
              title: text
              body: text
        """

    @Test("canonical, reordered, spaced and escaped clocks are all stored in the stored form", arguments: TestEngine.available)
    func storedCanonically(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let phone = try await SyncDevice.signUp(server)
            let clock = Self.clocks(of: phone)
            let (early, late) = (clock(0, 0), clock(1, 3))
            let written = #"{"body":"\#(early)","title":"\#(late)"}"#
            // Two fields, one clock each: the row clock is the earlier, the other keeps its key.
            let stored = #"{"*":"\#(early)","title":"\#(late)"}"#
            let deleted = #"{"_deleted":"\#(late)"}"#
            let forms: [(clocks: String, op: String, stored: String)] = [
                (written, "upsert", stored),
                (#"{"title":"\#(late)","body":"\#(early)"}"#, "upsert", stored),
                (#"{ "body" : "\#(early)", "title" : "\#(late)" }"#, "upsert", stored),
                (#"{"body":"\u0030\#(early.dropFirst())","title":"\#(late)"}"#, "upsert", stored),
                (#"{"body":"\#(early)","body":"\#(early)","title":"\#(late)"}"#, "upsert", stored),
                // Written whole with one clock: the row clock alone.
                (#"{"body":"\#(late)","title":"\#(late)"}"#, "upsert", #"{"*":"\#(late)"}"#),
                (deleted, "delete", deleted),
                // A delete's row keeps only its `_deleted` clock.
                (#"{"_deleted":"\#(late)","title":"\#(early)"}"#, "delete", deleted),
            ]
            for (index, form) in forms.enumerated() {
                let id = UUID().uuidString.lowercased()
                let fields = form.op == "upsert" ? #"{"title":"T","body":"B"}"# : nil
                let statuses = try await Self.push(phone, [(index + 1, id, form.op, fields, form.clocks)])
                #expect(statuses == [.applied], "form \(index)")
                let stored = try await database.strings("SELECT _clocks FROM notes WHERE id = '\(id)'")
                #expect(stored == [form.stored], "form \(index)")
            }
        }
    }

    /// The stored clocks are the merge's, whatever text came: a lowered clock, a record two mutations wrote, a stored
    /// record one mutation changed a field of.
    @Test("the stored clocks are the merge's for a lowered clock, a record two mutations wrote, or a stored record",
          arguments: TestEngine.available)
    func mergedClocksStored(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let phone = try await SyncDevice.signUp(server)
            let clock = Self.clocks(of: phone)
            let (early, late, ahead) = (clock(0, 0), clock(1, 0), clock(3_600_000, 0))
            let fields = #"{"title":"T","body":"B"}"#
            let (lowered, twice, stored) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
            let first = try await Self.push(phone, [
                // An hour ahead: lowered to the server's bound.
                (1, lowered, "upsert", fields, #"{"body":"\#(early)","title":"\#(ahead)"}"#),
                // Two mutations of one new record: the second's clock wins its field only.
                (2, twice, "upsert", fields, #"{"body":"\#(early)","title":"\#(early)"}"#),
                (3, twice, "upsert", #"{"title":"U"}"#, #"{"title":"\#(late)"}"#),
                (4, stored, "upsert", fields, #"{"body":"\#(early)","title":"\#(early)"}"#),
            ])
            #expect(first == [.applied, .applied, .applied, .applied])
            // A stored record: the push's text names one field, the row keeps both.
            #expect(try await Self.push(phone, [(5, stored, "upsert", #"{"title":"U"}"#, #"{"title":"\#(late)"}"#)]) == [.applied])

            let loweredText = try #require(try await database.strings("SELECT _clocks FROM notes WHERE id = '\(lowered)'").first)
            let values: [String: JSONValue] = ["title": "T", "body": "B"]
            let loweredClocks = ClockMap.expandingStored(try #require(ClockMap.clocks(fromText: loweredText)), fields: values)
            #expect(loweredClocks["body"]?.description == early)
            let title = try #require(loweredClocks["title"])
            #expect(title.description < ahead && title.milliseconds <= Int64(Date().timeIntervalSince1970 * 1000) + 60_000)
            #expect(loweredText == ClockMap.storedText(loweredClocks, fields: values))
            let merged = #"{"*":"\#(early)","title":"\#(late)"}"#
            #expect(try await database.strings("SELECT _clocks FROM notes WHERE id = '\(twice)'") == [merged])
            #expect(try await database.strings("SELECT _clocks FROM notes WHERE id = '\(stored)'") == [merged])
        }
    }

    /// Rows an older Ferry stored (one clock per field) and rows stored with a row clock are read alike: pulled in every
    /// form and layout, and merged with later writes.
    @Test("rows stored flat, as before, and with a row clock pull and merge alike", arguments: TestEngine.available)
    func flatAndRowClockRowsAgree(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let phone = try await SyncDevice.signUp(server)
            let clock = Self.clocks(of: phone)
            let (early, late, later) = (clock(0, 0), clock(1, 0), clock(2, 0))
            let (rowClock, flat) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
            let whole = #"{"body":"\#(early)","title":"\#(early)"}"#
            let written = try await Self.push(phone, [
                (1, rowClock, "upsert", #"{"title":"T","body":"B"}"#, whole), (2, flat, "upsert", #"{"title":"T","body":"B"}"#, whole),
            ])
            #expect(written == [.applied, .applied])
            try await database.execute(["UPDATE notes SET _clocks = '\(whole)' WHERE id = '\(flat)'"])
            #expect(try await database.strings("SELECT _clocks FROM notes ORDER BY _seq") == [#"{"*":"\#(early)"}"#, whole])
            try await Self.expectAlike(phone, rowClock, flat, fields: ["title": "T", "body": "B"], clocks: ["title": early, "body": early])

            // A field edited, another cleared: the merge reads either row, and both are stored alike.
            let edits = try await Self.push(phone, [
                (3, rowClock, "upsert", #"{"title":"U"}"#, #"{"title":"\#(late)"}"#), (4, flat, "upsert", #"{"title":"U"}"#, #"{"title":"\#(late)"}"#),
                (5, rowClock, "upsert", #"{"body":null}"#, #"{"body":"\#(later)"}"#), (6, flat, "upsert", #"{"body":null}"#, #"{"body":"\#(later)"}"#),
            ])
            #expect(edits == [.applied, .applied, .applied, .applied])
            let stored = #"{"*":"\#(late)","body":"\#(later)"}"#
            #expect(try await database.strings("SELECT _clocks FROM notes ORDER BY id") == [stored, stored])
            try await Self.expectAlike(phone, rowClock, flat, fields: ["title": "U", "body": .null], clocks: ["title": late, "body": later])
        }
    }

    /// Pulls the two records in both clock forms and both layouts: each has `fields` and `clocks`, and a reply never
    /// shows the stored form's row clock key.
    static func expectAlike(_ device: SyncDevice, _ first: String, _ second: String, fields: [String: JSONValue], clocks: [String: String]) async throws {
        let expected = try clocks.mapValues { try #require(HLC($0)) }
        for form in [ClockForm.field, .row] {
            for layout in [PullLayout.changes, .rows] {
                let reply = try await device.send("POST", "/sync/v1/pull", PullRequest(cursors: [device.userID: 0], clockForm: form, layout: layout))
                #expect(!String(decoding: reply.body, as: UTF8.self).contains(#""*""#))
                let read = layout == .rows ? try RowsLayout.read(Array(reply.body)) : try device.auth.decode(reply, as: PullResponse.self)
                let changes = latestRows(read.changes)
                for id in [first, second].compactMap(UUID.init(uuidString:)) {
                    let change = try #require(changes[id], "\(form) \(layout)")
                    #expect(change.fields == fields, "\(form) \(layout)")
                    #expect(change.clocks == expected, "\(form) \(layout)")
                }
            }
        }
    }

    /// The wire clocks of `device`, `offset` milliseconds from now (and a counter).
    static func clocks(of device: SyncDevice) -> (_ offset: Int64, _ counter: Int) -> String {
        let node = device.deviceID.uuidString.lowercased()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return { offset, counter in HLC(milliseconds: now + offset, counter: counter, node: node).description }
    }

    /// Pushes mutations spelled as raw JSON text: `(mutationId, record id, op, fields text or nil, clocks text)`.
    static func push(_ device: SyncDevice, _ mutations: [(Int, String, String, String?, String)]) async throws -> [MutationResult.Status] {
        let node = device.deviceID.uuidString.lowercased()
        let items = mutations.map { mutationID, id, op, fields, clocks in
            """
            {"mutationId":\(mutationID),"space":"\(device.userID.uuidString.lowercased())","collection":"notes","id":"\(id)",\
            "op":"\(op)"\(fields.map { #","fields":\#($0)"# } ?? ""),"clocks":\(clocks)}
            """
        }
        let text = #"{"deviceId":"\#(node)","mutations":[\#(items.joined(separator: ","))]}"#
        let reply = try await device.auth.send("POST", "/sync/v1/push", body: Data(text.utf8), token: device.session.accessToken)
        return try device.auth.decode(reply, as: PushResponse.self).results.map(\.status)
    }
}
