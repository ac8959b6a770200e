import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Cursors under concurrency and garbage collection (docs/architecture.md, invariant 2).
@Suite("Sync: cursors")
struct CursorTests {
    @Test("readers pulling while eight devices push into one space miss nothing", arguments: TestEngine.available)
    func noSkippedCommits(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let company = try await owner.createSpace("Acme")
            var writers: [SyncDevice] = []
            for index in 0..<8 {
                let writer = try await SyncDevice.signUp(server, "writer\(index)")
                try await owner.share(company.id, with: writer, as: .member)
                writers.append(writer)
            }
            let reader = owner
            let (written, seen) = try await withThrowingTaskGroup(of: (isReader: Bool, ids: Set<UUID>).self) { group in
                for var writer in writers {
                    group.addTask {
                        var ids = Set<UUID>()
                        for _ in 0..<5 {
                            let batch = (0..<4).map { _ in writer.upsert("clients", space: company.id, ["name": "c"]) }
                            let reply = try await writer.push(batch)
                            #expect(reply.results.allSatisfy { $0.status == .applied })
                            ids.formUnion(batch.map(\.id))
                        }
                        return (false, ids)
                    }
                }
                group.addTask {
                    // Pull with small pages while the writers commit. A cursor that skipped a late commit would
                    // never see that record again, so this loop would run into its deadline.
                    var reader = reader
                    var seen = Set<UUID>()
                    let deadline = ContinuousClock.now + .seconds(60)
                    while seen.count < 160, ContinuousClock.now < deadline {
                        seen.formUnion(try await reader.pullAll(limit: 7).changes.filter { $0.space == company.id }.map(\.id))
                    }
                    return (true, seen)
                }
                var written = Set<UUID>(), seen = Set<UUID>()
                for try await result in group {
                    if result.isReader { seen = result.ids } else { written.formUnion(result.ids) }
                }
                return (written, seen)
            }
            #expect(written.count == 160)
            #expect(seen == written, "the continuous reader saw every committed record")
        }
    }

    @Test("a cursor older than purged tombstones gets resetRequired; a fresh pull is consistent", arguments: TestEngine.available)
    func tombstoneCollection(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let kept = UUID(), gone = UUID()
            _ = try await device.push([
                device.upsert("clients", kept, ["name": "kept"]), device.upsert("clients", gone, ["name": "gone"]),
            ])
            var stale = try await device.sibling()
            _ = try await stale.pullAll()
            _ = try await device.push([device.delete("clients", gone)])
            _ = try await device.push([device.upsert("clients", kept, ["name": "kept, renamed"])])

            try await server.server.collectTombstones(before: Date().addingTimeInterval(60))

            let reply = try await stale.pull(PullRequest(cursors: stale.cursors))
            #expect(reply.resetRequired == [stale.userID])
            #expect(reply.changes.isEmpty)
            stale.cursors = [:]
            let fresh = latestRows(try await stale.pullAll().changes)
            #expect(fresh[gone] == nil && fresh[kept]?.fields["name"] == .string("kept, renamed"))
        }
    }

    @Test("a cursor ahead of every commit (a database restored from an older backup) gets resetRequired", arguments: TestEngine.available)
    func cursorAhead(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            _ = try await device.push([device.upsert("clients", UUID(), ["name": "only"])])
            _ = try await device.pullAll()
            #expect(try await device.pull(PullRequest(cursors: device.cursors)).resetRequired.isEmpty)
            let ahead = try await device.pull(PullRequest(cursors: [device.userID: (device.cursors[device.userID] ?? 0) + 5]))
            #expect(ahead.resetRequired == [device.userID] && ahead.changes.isEmpty)
        }
    }
}
