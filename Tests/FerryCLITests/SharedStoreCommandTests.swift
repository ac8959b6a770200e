import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// One store file written by several processes at once, as an app and its extensions share one in an App Group
/// container: `ferry put` from several processes plays the extensions, `ferry sync --watch` the app.
@Suite("One store, several processes")
struct SharedStoreCommandTests {
    @Test("puts from four processes at once while 'sync --watch' runs and two more syncs start: every record reaches the server once",
          arguments: TestEngine.available)
    func concurrentWriters(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (phone, pad, _) = try await DataCommandTests.Device.pair(server, home: home, name: "shared")
            _ = try await pad.ok(["sync"])
            let environment = ["FERRY_SERVER": server.baseURL.absoluteString, "FERRY_API_KEY": server.server.keys.anonKey, "FERRY_HOME": home, "FERRY_PROFILE": "pad"]
            let watcher = try FerryProcess(["sync", "--watch", "--json"], environment: environment)
            defer { watcher.killIfRunning() }
            try #require(await SyncWatchCommandTests.line(of: watcher) { $0["stream"] as? String == "connected" } != nil, "the stream never opened")

            let titles = (0..<4).flatMap { writer in (0..<8).map { "Writer \(writer) note \($0)" } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for index in 0..<8 {
                            _ = try await pad.ok(["put", "sermons", "title=Writer \(writer) note \(index)", "date=2026-11-29T10:00:00Z"])
                        }
                    }
                }
                for _ in 0..<2 {
                    group.addTask { _ = try await pad.ok(["sync"]) }
                }
                try await group.waitForAll()
            }
            // The watcher notices the other processes' writes within a second and pushes them.
            try await eventually("the phone never received all 32 records") {
                _ = try await phone.ok(["sync"])
                let listed = try await phone.json(["ls", "sermons"])
                return (listed["records"] as? [[String: Any]])?.count == 32
            }
            let listed = try await phone.json(["ls", "sermons"])
            let received = (listed["records"] as? [[String: Any]] ?? []).compactMap { ($0["fields"] as? [String: Any])?["title"] as? String }
            #expect(received.sorted() == titles.sorted(), "each record once")

            // With no other process syncing, the watcher alone pushes another process's write, well before its
            // periodic sync (60 s): it looks for other processes' writes every second.
            _ = try await pad.ok(["put", "sermons", "title=Noticed", "date=2026-11-29T10:00:00Z"])
            try await eventually("the watcher did not push another process's write within 15 s", timeout: .seconds(15)) {
                try await pad.json(["doctor"])["pending"] as? Int == 0
            }
            watcher.signal(SIGINT)
            #expect(await watcher.waitForExit(timeout: .seconds(60)).status == 0)
        }
    }
}
