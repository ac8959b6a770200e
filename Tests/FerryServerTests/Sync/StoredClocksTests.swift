import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// A record's `_clocks` column is the text `ClockMap` writes, whatever form of JSON the push spelled its clocks in;
/// the text a push sends in that form is stored as it is.
@Suite("Sync: clocks stored in one form")
struct StoredClocksTests {
    static let schema = """
        collections:
          notes:
            fields:
              title: text
              body: text
        """

    @Test("canonical, reordered, spaced and escaped clocks are all stored as ClockMap writes them", arguments: TestEngine.available)
    func storedCanonically(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let phone = try await SyncDevice.signUp(server)
            let node = phone.deviceID.uuidString.lowercased()
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let (early, late) = (HLC(milliseconds: now, counter: 0, node: node).description, HLC(milliseconds: now + 1, counter: 3, node: node).description)
            let written = #"{"body":"\#(early)","title":"\#(late)"}"#
            let deleted = #"{"_deleted":"\#(late)"}"#
            let forms: [(clocks: String, op: String, stored: String)] = [
                (written, "upsert", written),
                (#"{"title":"\#(late)","body":"\#(early)"}"#, "upsert", written),
                (#"{ "body" : "\#(early)", "title" : "\#(late)" }"#, "upsert", written),
                (#"{"body":"\u0030\#(early.dropFirst())","title":"\#(late)"}"#, "upsert", written),
                (#"{"body":"\#(early)","body":"\#(early)","title":"\#(late)"}"#, "upsert", written),
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

    /// Canonical text is stored as sent only for a new record that one mutation alone made, with no clock lowered: in
    /// every other case the stored clocks are the merge, whatever text came.
    @Test("canonical text is not stored as sent for a lowered clock, a record two mutations wrote, or a stored record",
          arguments: TestEngine.available)
    func mergedClocksStored(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let phone = try await SyncDevice.signUp(server)
            let node = phone.deviceID.uuidString.lowercased()
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let clock = { (offset: Int64) in HLC(milliseconds: now + offset, counter: 0, node: node).description }
            let (early, late, ahead) = (clock(0), clock(1), clock(3_600_000))
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
            let loweredClocks = try #require(ClockMap.clocks(fromText: loweredText))
            #expect(loweredClocks["body"]?.description == early)
            let title = try #require(loweredClocks["title"])
            #expect(title.description < ahead && title.milliseconds <= Int64(Date().timeIntervalSince1970 * 1000) + 60_000)
            #expect(loweredText == ClockMap.text(loweredClocks))
            let merged = #"{"body":"\#(early)","title":"\#(late)"}"#
            #expect(try await database.strings("SELECT _clocks FROM notes WHERE id = '\(twice)'") == [merged])
            #expect(try await database.strings("SELECT _clocks FROM notes WHERE id = '\(stored)'") == [merged])
        }
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
