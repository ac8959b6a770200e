import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `ferry sync --watch` as a person runs it: one terminal watches, another writes.
@Suite("ferry sync --watch")
struct SyncWatchCommandTests {
    @Test("a profile running 'sync --watch --json' shows another device's write, one JSON line per sync or carried change, and exits 0 on SIGINT",
          arguments: TestEngine.available)
    func watch(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (phone, pad, _) = try await DataCommandTests.Device.pair(server, home: home, name: "watch")
            _ = try await pad.ok(["sync"])
            let environment = ["FERRY_SERVER": server.baseURL.absoluteString, "FERRY_API_KEY": server.server.keys.anonKey, "FERRY_HOME": home, "FERRY_PROFILE": "pad"]
            let watcher = try FerryProcess(["sync", "--watch", "--json"], environment: environment)
            defer { watcher.killIfRunning() }
            // A state line or a sync line, whichever comes first on a loaded machine, says the stream is open.
            try #require(await Self.line(of: watcher) { $0["stream"] as? String == "connected" } != nil, "the stream never opened")

            _ = try await phone.ok(["put", "sermons", "title=Watched", "date=2026-11-29T10:00:00Z"])
            _ = try await phone.ok(["sync"])
            let sync = try #require(await Self.line(of: watcher) { ($0["applied"] as? Int ?? 0) > 0 }, "the watcher never applied the write")
            // The changes the poke carried (applied without a sync, `realtimeCarried`), or on a slow machine the sync
            // that the stream's opening asked for, if it began late.
            #expect((sync["triggers"] as? [String] ?? []).contains { $0.hasPrefix("realtime") }, "\(sync)")

            watcher.signal(SIGINT)
            let exit = await watcher.waitForExit(timeout: .seconds(60))
            #expect(exit.status == 0, "exit \(exit.status): \(exit.stderr)")
            let listed = try await pad.ok(["ls", "sermons"])
            #expect(listed.contains("Watched"))
        }
    }

    /// The next JSON line of `process` for which `matches` holds, skipping others; `nil` when the process ends or 240 s pass first.
    static func line(of process: FerryProcess, where matches: ([String: Any]) -> Bool) async -> [String: Any]? {
        // The watcher also prints a line per periodic sync (every 60 s): give up after a while, not never.
        let deadline = ContinuousClock.now + .seconds(240)
        while ContinuousClock.now < deadline, let line = await process.waitForLine(startingWith: "{") {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], matches(object) { return object }
        }
        return nil
    }
}
