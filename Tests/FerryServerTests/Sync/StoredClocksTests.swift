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
                let fields = form.op == "upsert" ? #","fields":{"title":"T","body":"B"}"# : ""
                let text = """
                    {"deviceId":"\(node)","mutations":[{"mutationId":\(index + 1),"space":"\(phone.userID.uuidString.lowercased())",\
                    "collection":"notes","id":"\(id)","op":"\(form.op)"\(fields),"clocks":\(form.clocks)}]}
                    """
                let reply = try await phone.auth.send("POST", "/sync/v1/push", body: Data(text.utf8), token: phone.session.accessToken)
                #expect(try phone.auth.decode(reply, as: PushResponse.self).results.map(\.status) == [.applied], "form \(index)")
                let stored = try await database.strings("SELECT _clocks FROM notes WHERE id = '\(id)'")
                #expect(stored == [form.stored], "form \(index)")
            }
        }
    }
}
