import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The server reads the next page of a paged pull while the client reads this one, and serves it only as the answer
/// it would give now (docs/sync.md, "Read-ahead").
@Suite("Sync: pull read-ahead")
struct PullReadAheadTests {
    @Test("a paged pull is answered from pages read ahead, the same pages as read when asked", arguments: TestEngine.available)
    func pagesServed(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let written = (0..<25).map { _ in device.upsert("clients", ["name": "c"]) }
            _ = try await device.push(written)
            var reader = try await device.sibling()
            let (changes, requests) = try await reader.pullAll(limit: 10)
            #expect(requests == 3)
            #expect(changes.map(\.id) == written.map(\.id), "every record once, in the order written")
            #expect(changes.map(\.seq) == changes.map(\.seq).sorted())
            let counts = try await readAheadCounts(server)
            #expect(counts["served"] == 2, "pages 2 and 3 were read ahead")
        }
    }

    @Test("a page read ahead is read again after a commit in its space", arguments: TestEngine.available)
    func staleAfterCommit(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            var writer = try await SyncDevice.signUp(server)
            let first = (0..<3).map { _ in writer.upsert("clients", ["name": "c"]) }
            _ = try await writer.push(first)
            var reader = try await writer.sibling()
            let page1 = try await reader.pull(PullRequest(cursors: reader.cursors, limit: 2))
            #expect(page1.hasMore && page1.changes.count == 2)
            // Let the read-ahead of page 2 finish on the old state, then commit behind it.
            try await Task.sleep(for: .milliseconds(200))
            let late = writer.upsert("clients", ["name": "late"])
            _ = try await writer.push([late])
            reader.cursors = page1.cursors
            let page2 = try await reader.pull(PullRequest(cursors: reader.cursors, limit: 2))
            #expect(page2.changes.map(\.id) == [first[2].id, late.id], "the page as it is now, the late commit included")
            #expect(!page2.hasMore)
            let counts = try await readAheadCounts(server)
            #expect(counts["stale"] == 1 && counts["served", default: 0] == 0)
        }
    }

    @Test("a page read ahead is never served to a member removed since", arguments: TestEngine.available)
    func removedMember(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            var owner = try await SyncDevice.signUp(server, "owner")
            let shared = try await owner.createSpace("Shared")
            var member = try await SyncDevice.signUp(server, "member")
            try await owner.share(shared.id, with: member, as: .member)
            _ = try await owner.push((0..<4).map { _ in owner.upsert("clients", space: shared.id, ["name": "secret"]) })
            let page1 = try await member.pull(PullRequest(cursors: [:], limit: 2))
            #expect(page1.hasMore && page1.changes.allSatisfy { $0.space == shared.id })
            try await Task.sleep(for: .milliseconds(200))
            let removed = try await owner.send(
                "DELETE", "/sync/v1/spaces/\(shared.id.uuidString)/members/\(member.userID.uuidString)", [String: String]()
            )
            #expect(removed.status == 204)
            member.cursors = page1.cursors
            let page2 = try await member.pull(PullRequest(cursors: member.cursors, limit: 2))
            #expect(page2.changes.allSatisfy { $0.space != shared.id }, "nothing of a space the member left")
            #expect(page2.cursors[shared.id] == nil)
        }
    }

    @Test("no page is read ahead after a reply that resets a space, nor with read-ahead turned off", arguments: TestEngine.available)
    func notReadAhead(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let gone = UUID()
            _ = try await device.push([device.upsert("clients", ["name": "kept"]), device.upsert("clients", gone, ["name": "gone"])])
            var stale = try await device.sibling()
            _ = try await stale.pullAll()
            _ = try await device.push([device.delete("clients", gone)])
            try await server.server.collectTombstones(before: Date().addingTimeInterval(60))
            let shared = try await device.createSpace("Shared")
            _ = try await device.push((0..<3).map { _ in device.upsert("clients", space: shared.id, ["name": "c"]) })
            let request = PullRequest(cursors: stale.cursors, limit: 2)
            let reset = try await stale.pull(request)
            #expect(reset.resetRequired == [stale.userID] && reset.hasMore)
            // A client that ignores the reset and asks from the reply's cursors gets a page read now.
            _ = try await stale.pull(PullRequest(cursors: reset.cursors, limit: 2))
            #expect(try await readAheadCounts(server)["served", default: 0] == 0)
        }
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: {
            AuthHarness.fastHashing(&$0)
            $0.sync.maximumPagesReadAhead = 0
        }) { server in
            var device = try await SyncDevice.signUp(server)
            let written = (0..<5).map { _ in device.upsert("clients", ["name": "c"]) }
            _ = try await device.push(written)
            var reader = try await device.sibling()
            #expect(try await reader.pullAll(limit: 2).changes.map(\.id) == written.map(\.id))
            #expect(try await readAheadCounts(server).isEmpty, "no read-ahead, no counter")
        }
    }

    /// `ferry_pull_read_ahead_total` by outcome, from `/metrics` (open to loopback).
    private func readAheadCounts(_ server: any ServerUnderTest) async throws -> [String: Int] {
        let text = try await server.send("GET", "/metrics").text
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("ferry_pull_read_ahead_total{") {
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\""),
                  let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            counts[String(line[line.index(after: open)..<close])] = Int(value)
        }
        return counts
    }
}
