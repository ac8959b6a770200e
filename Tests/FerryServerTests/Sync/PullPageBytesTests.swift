import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// A pull page is bounded in bytes as well as in changes, so `limit: 5000` over large records stays a few MiB.
@Suite("Sync: pull pages bounded in bytes")
struct PullPageBytesTests {
    /// One page of a pull: its reply's size, and the reply.
    struct Page {
        var bytes: Int
        var reply: PullResponse
    }

    /// Runs `body` with a writer and a reader device of one account, on a server whose pages hold about `cap` bytes.
    static func withDevices(
        _ engine: TestEngine, schema: String, cap: Int, _ body: (inout SyncDevice, SyncDevice) async throws -> Void
    ) async throws {
        try await LiveServer.with(engine, schema: schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.sync.maximumPullBytes = cap
        }) { server in
            var writer = try await SyncDevice.signUp(server)
            let reader = try await writer.sibling()
            try await body(&writer, reader)
        }
    }

    /// Every page `reader` pulls from nothing, `limit` 5000, until one says it has no more (at most 100 pages).
    static func pullAll(_ reader: SyncDevice) async throws -> [Page] {
        var cursors: [UUID: Int64] = [:]
        var pages: [Page] = []
        while pages.count < 100 {
            let reply = try await reader.send("POST", "/sync/v1/pull", PullRequest(cursors: cursors, limit: 5000))
            #expect(reply.status == 200)
            let page = try JSONValueDecoder().decode(PullResponse.self, from: Array(reply.body))
            pages.append(Page(bytes: reply.body.count, reply: page))
            cursors.merge(page.cursors) { _, new in new }
            if !page.hasMore { break }
        }
        return pages
    }

    @Test("limit 5000 over 200 KiB records: every page stays near the byte cap, has at least one change, and nothing is skipped", arguments: TestEngine.available)
    func boundedPages(_ engine: TestEngine) async throws {
        let schema = """
            version: 1
            collections:
              recordings:
                fields:
                  transcript: text
            """
        try await Self.withDevices(engine, schema: schema, cap: 1024 * 1024) { writer, reader in
            let text = String(repeating: "word ", count: 40 * 1024)
            var written = Set<UUID>()
            for _ in 0..<4 {
                let batch = (0..<5).map { _ in writer.upsert("recordings", ["transcript": .string(text)]) }
                #expect(try await writer.push(batch).results.allSatisfy { $0.status == .applied })
                written.formUnion(batch.map(\.id))
            }
            let pages = try await Self.pullAll(reader)
            for page in pages {
                #expect(page.bytes <= 1024 * 1024 + 256 * 1024, "a page is at most the cap plus one record: \(page.bytes) bytes")
                #expect(!page.reply.changes.isEmpty || !page.reply.hasMore, "every page with more to come carries a change")
            }
            #expect(Set(pages.flatMap { $0.reply.changes.map(\.id) }) == written)
            #expect(pages.count >= 4, "20 records of 200 KiB under a 1 MiB cap take several pages, not one")
        }
    }

    /// Each collection's read stops once its own rows pass the byte cap. Stopping on the bytes of the whole space
    /// would lose rows: whichever collection is read first fills the cap with its large rows, and the other's small
    /// rows, earlier in sequence, would never be read.
    @Test("two collections, small rows first in sequence and large rows after: every change arrives once, in order", arguments: TestEngine.available)
    func collectionsCutApart(_ engine: TestEngine) async throws {
        let schema = """
            version: 1
            collections:
              audio:
                fields:
                  text: text
              notes:
                fields:
                  text: text
            """
        try await Self.withDevices(engine, schema: schema, cap: 64 * 1024) { writer, reader in
            let large = String(repeating: "spoken ", count: 4 * 1024)
            var written: [UUID] = []
            for (collection, text) in [("notes", "small"), ("audio", "small"), ("audio", large), ("notes", large)] {
                let batch = (0..<(text == large ? 6 : 20)).map { _ in writer.upsert(collection, ["text": .string(text)]) }
                #expect(try await writer.push(batch).results.allSatisfy { $0.status == .applied })
                written += batch.map(\.id)
            }
            let changes = try await Self.pullAll(reader).flatMap(\.reply.changes)
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.seq < $1.seq }, "changes come in sequence order, none twice")
            #expect(changes.map(\.id) == written, "\(changes.count) of \(written.count) changes arrived, in the order written")
        }
    }

    /// A change larger than the cap is still sent alone; when it is the last one, the page says so, on both engines.
    @Test("one record larger than the byte cap comes alone, and as the last one the page has no more", arguments: TestEngine.available)
    func oversizedLastChange(_ engine: TestEngine) async throws {
        let schema = """
            version: 1
            collections:
              notes:
                fields:
                  text: text
            """
        try await Self.withDevices(engine, schema: schema, cap: 1024) { writer, reader in
            let batch = [writer.upsert("notes", ["text": .string("small")]), writer.upsert("notes", ["text": .string(String(repeating: "large ", count: 1000))])]
            #expect(try await writer.push(batch).results.allSatisfy { $0.status == .applied })
            let pages = try await Self.pullAll(reader).map { $0.reply.changes.map(\.id) }
            #expect(pages == [[batch[0].id], [batch[1].id]], "the small record, then the large one alone, and no empty page after it")
        }
    }
}
