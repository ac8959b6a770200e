import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The console in a real browser: Debian's headless Chromium driven by selenium (`Tests/Compatibility/console_browser.py`,
/// installed by `scripts/test.sh`) against a live server holding a user, a shared space, 10,000 records and a device,
/// on both engines. Screenshots and page timings go to `.build/test-artifacts/console-<engine>`
/// (`FERRY_TEST_ARTIFACTS` moves them).
@Suite("Console in headless Chromium")
struct ConsoleBrowserTests {
    static let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Compatibility/console_browser.py")

    @Test("an operator signs in and every deep link shows the data the test made; nobody else gets data", arguments: TestEngine.available)
    func browser(_ engine: TestEngine) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), PythonCheck.canImport("selenium") else {
            // CI sets FERRY_REQUIRE_BROWSER=1: there a missing browser is a failure, not a skip.
            #expect(ProcessInfo.processInfo.environment["FERRY_REQUIRE_BROWSER"] != "1", "chromium-driver or selenium is missing")
            print("⚠︎ Skipping the console's browser test: chromium-driver or selenium is missing (scripts/test.sh installs them).")
            return
        }
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.console.sampleInterval = .seconds(1)
        }) { server in
            try await server.server.operators.add(email: "ops@example.com", password: ConsoleRoutesTests.password)
            var ada = try await SyncDevice.signUp(server, "ada")
            let choir = try await ada.createSpace("Choir of St Ada")
            // The page-load figures are taken with 10,000 records in the collection the pages show; the one the test
            // looks for is the newest, so the collection's first page (newest first) shows it.
            for batch in 0..<10 {
                var mutations: [Mutation] = []
                for index in 0..<1000 {
                    mutations.append(ada.upsert("sermons", space: choir.id, ["title": .string("Sermon \(batch * 1000 + index)"), "date": "2026-01-01T10:00:00Z"]))
                }
                _ = try await ada.push(mutations)
            }
            let sermon = UUID()
            _ = try await ada.push([
                ada.upsert("sermons", sermon, space: choir.id, ["title": "Advent in the choir", "date": "2026-11-29T10:00:00Z"]),
                ada.upsert("notes", space: choir.id, ["sermon_id": .string(sermon.lowercasedText), "text": "Come, thou long-expected"]),
            ])
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let expectations = folder.url.appending(path: "expectations.json")
            try JSONSerialization.data(withJSONObject: [
                "operator_email": "ops@example.com", "operator_password": ConsoleRoutesTests.password,
                "user_email": ada.session.user.email, "user_id": ada.userID.lowercasedText, "user_access_token": ada.session.accessToken,
                "anon_key": server.server.keys.anonKey, "service_role_key": server.server.keys.serviceRoleKey,
                "space_id": choir.id.lowercasedText, "space_name": "Choir of St Ada", "collection": "sermons", "record_id": sermon.lowercasedText,
                "record_title": "Advent in the choir", "device_id": ada.deviceID.lowercasedText, "device_name": "Test device",
            ]).write(to: expectations)
            let artifacts = ProcessInfo.processInfo.environment["FERRY_TEST_ARTIFACTS"].map { URL(filePath: $0) }
                ?? Self.script.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appending(path: ".build/test-artifacts")
            let (status, output) = try await PythonCheck.run(
                Self.script.path(), arguments: [server.baseURL.absoluteString, expectations.path(), artifacts.appending(path: "console-\(engine)").path()]
            )
            #expect(status == 0 && output.contains("ok all"), "\(output)")
            print(output.split(separator: "\n").filter { $0.hasPrefix("time ") }.map { "console \(engine): \($0)" }.joined(separator: "\n"))
        }
    }
}
