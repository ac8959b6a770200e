import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// PostgreSQL only: a push inserts the rows its plan found nowhere, and another space's push may store one of those
/// ids between that plan and the insert (the two pushes hold different spaces' locks). SQLite has one writer at a time.
@Suite("PostgreSQL: an id stored by another space during a push")
struct PostgresInsertRaceTests {
    static let schema = """
        collections:
          notes:
            fields:
              title: text
          labels:
            fields:
              title: text
            unique: [title]
          \(longName):
            fields:
              title: text
            unique: [title]
        """

    /// A name of the longest length: PostgreSQL cuts it to name the table's primary key (`…_pkey` in 63 bytes).
    static let longName = "labels_" + String(repeating: "x", count: Identifier.maximumLength - 7)

    /// A collection without unique keys (its new rows are inserted in one statement), one with (each row alone), and
    /// one with a name of the longest length.
    static let collections = ["notes", "labels", longName]

    @Test("the push plans again, finds the id and refuses its mutation: the other space's record is never moved or overwritten",
          arguments: TestEngine.available.filter { $0 == .postgres }, collections)
    func idStoredDuringPush(_ engine: TestEngine, collection: String) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let owner = try await SyncDevice.signUp(server, "owner")
            var intruder = try await SyncDevice.signUp(server, "intruder")
            let id = UUID()
            let clock = "001800000000000-00000-\(owner.deviceID.uuidString.lowercased())"
            var push: Task<PushResponse, any Error>?
            // The owner's write, as its push stores it, committed only once the intruder's push waits on the id.
            try await database.whileUncommitted([
                "UPDATE ferry_spaces SET seq = seq + 1 WHERE id = '\(owner.userID.lowercasedText)'",
                """
                INSERT INTO \(collection) (id, _space, _seq, _clocks, _deleted, _updated_at, title)
                SELECT '\(id.lowercasedText)', id, seq, '{"title":"\(clock)"}', false, now(), 'the owner''s'
                FROM ferry_spaces WHERE id = '\(owner.userID.lowercasedText)'
                """,
            ]) {
                let mutation = intruder.upsert(collection, id, ["title": "the intruder's"])
                push = Task { [intruder] in try await intruder.push([mutation]) }
                let waits = try await database.waitForLockWait(of: "INSERT INTO \"\(collection)\"")
                #expect(waits, "the push waits on the uncommitted id")
            }
            let reply = try await #require(push).value
            #expect(reply.results.map(\.status) == [.rejected])
            #expect(reply.results.first?.code == "space_mismatch")
            #expect(try await database.strings("SELECT _space::text || ' ' || title FROM \(collection) WHERE id = '\(id.lowercasedText)'")
                == ["\(owner.userID.lowercasedText) the owner's"])

            // The intruder's next write lands: the refused one left nothing half done.
            let next = try await intruder.push([intruder.upsert(collection, ["title": "its own"])])
            #expect(next.results.map(\.status) == [.applied])
        }
    }
}
