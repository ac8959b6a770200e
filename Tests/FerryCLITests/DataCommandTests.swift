import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The data commands as a person uses them: offline writes on one profile, `ferry sync`, reads on another.
@Suite("ferry data and sync commands")
struct DataCommandTests {
    struct Device {
        var server: URL
        var apiKey: String
        var home: String
        var profile: String

        func run(_ arguments: [String], password: String? = nil) async throws -> FerryProcess.Exit {
            var environment = ["FERRY_SERVER": server.absoluteString, "FERRY_API_KEY": apiKey, "FERRY_HOME": home, "FERRY_PROFILE": profile]
            if let password { environment["FERRY_PASSWORD"] = password }
            return try await FerryProcess.run(arguments, environment: environment)
        }

        /// Runs a command that must succeed and returns its standard output.
        func ok(_ arguments: [String], password: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            let exit = try await run(arguments, password: password)
            #expect(exit.status == 0, "ferry \(arguments.joined(separator: " ")): \(exit.stderr)", sourceLocation: sourceLocation)
            return exit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Two profiles of one new account in `home`: "phone" signed up, "pad" signed in.
        static func pair(_ server: LiveServer, home: String, name: String) async throws -> (phone: Device, pad: Device, email: String) {
            let phone = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "phone")
            let pad = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "pad")
            let email = uniqueEmail(name)
            #expect(try await phone.run(["signup", email], password: "correct horse 1").status == 0)
            #expect(try await pad.run(["login", email], password: "correct horse 1").status == 0)
            return (phone, pad, email)
        }

        func json(_ arguments: [String], password: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
            let text = try await ok(arguments + ["--json"], password: password, sourceLocation: sourceLocation)
            return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        }
    }

    @Test("put before the schema is known says to sync; put/get/ls/rm offline; sync moves a sermon and its note to a second device",
          arguments: TestEngine.available)
    func twoProfiles(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (phone, pad, _) = try await Device.pair(server, home: home, name: "cli")

            // Sign-in caches the server's schema; without it, data commands say what to do.
            #expect(FileManager.default.fileExists(atPath: home + "/profiles/pad/schema.json"))
            try FileManager.default.removeItem(atPath: home + "/profiles/pad/schema.json")
            let early = try await pad.run(["put", "sermons", "title=Early", "date=2026-11-01T10:00:00Z"])
            #expect(early.status == 1)
            #expect(early.stderr.contains("run 'ferry sync' once"), "a put before any schema tells the user to sync: \(early.stderr)")

            let first = try await phone.json(["sync"])
            #expect(first["requests"] as? Int == 1 && first["pushed"] as? Int == 0)

            let sermon = try await phone.ok(["put", "sermons", "title=Sunday Service", "date=2026-11-01T10:00:00Z", "duration=3600"])
            #expect(UUID(uuidString: sermon) != nil, "put prints the new id")
            let note = try await phone.ok(["put", "notes", "sermon_id=\(sermon)", "text=Key point", "timestamp=120.5"])
            let bad = try await phone.run(["put", "sermons", "--id", sermon, "colour=red"])
            #expect(bad.status == 1 && bad.stderr.contains("unknown_field"))
            let shown = try await phone.ok(["get", "sermons", sermon, "--children"])
            #expect(shown.contains("title=\"Sunday Service\"") && shown.contains("[pending]") && shown.contains(note))
            let listed = try await phone.json(["ls", "sermons", "--where", "duration=3600"])
            #expect((listed["records"] as? [Any])?.count == 1)

            let pushed = try await phone.json(["sync"])
            #expect(pushed["pushed"] as? Int == 2 && pushed["rejected"] as? Int == 0 && pushed["pending"] as? Int == 0)
            let pulled = try await pad.json(["sync"])
            #expect(pulled["applied"] as? Int == 2 && pulled["pulled"] as? Int == 2)
            let onPad = try await pad.json(["get", "sermons", sermon, "--children"])
            let children = onPad["children"] as? [String: [[String: Any]]]
            #expect(children?["notes"]?.first?["id"] as? String == note)
            #expect((onPad["fields"] as? [String: Any])?["duration"] as? Int == 3600)

            // A delete on the pad reaches the phone, children included.
            _ = try await pad.ok(["rm", "sermons", sermon])
            _ = try await pad.ok(["sync"])
            _ = try await phone.ok(["sync"])
            #expect(try await phone.run(["get", "notes", note]).status == 1)
            let remaining = try await phone.json(["ls", "sermons"])["records"] as? [Any]
            #expect(remaining?.isEmpty == true)

            let doctor = try await phone.json(["doctor"])
            #expect(doctor["healthy"] as? Bool == true)
            _ = try await phone.ok(["doctor", "--repair"])
            let resync = try await phone.json(["sync"])
            #expect(resync["pulled"] as? Int ?? 0 >= 2, "after a repair everything is pulled again")

            let spaces = try await phone.json(["spaces", "ls"])
            #expect((spaces["spaces"] as? [[String: Any]])?.contains { $0["personal"] as? Bool == true } == true)
        }
    }

    @Test("one account's local data is never used for another account signed in on the same profile")
    func anotherAccount() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let device = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "shared")
            #expect(try await device.run(["signup", "first-\(UUID().uuidString.prefix(6))@example.com"], password: "correct horse 1").status == 0)
            _ = try await device.ok(["put", "sermons", "title=Mine", "date=2026-11-01T10:00:00Z"])
            _ = try await device.ok(["logout"])
            let second = "second-\(UUID().uuidString.prefix(6))@example.com"
            #expect(try await device.run(["signup", second], password: "correct horse 1").status == 0)
            let refused = try await device.run(["ls", "sermons"])
            #expect(refused.status == 1 && refused.stderr.contains("belongs to another account"))
            _ = try await device.ok(["reset"])
            #expect(try await device.run(["login", second], password: "correct horse 1").status == 0)
            #expect(try await device.ok(["ls", "sermons"]).hasPrefix("No records"), "after the reset the second account starts clean")
        }
    }

    @Test("SIGKILL in the middle of 'ferry sync': nothing acknowledged is lost, the next sync finishes, the other device gets every record",
          arguments: TestEngine.available)
    func killedMidSync(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (phone, pad, _) = try await Device.pair(server, home: home, name: "kill")
            let count = 24
            for index in 0..<count {
                _ = try await phone.ok(["put", "sermons", "title=Sermon \(index)", "date=2026-11-01T10:00:00Z"])
            }
            let sync = try FerryProcess(
                ["sync", "--progress", "--batch-size", "2"],
                environment: ["FERRY_SERVER": server.baseURL.absoluteString, "FERRY_API_KEY": phone.apiKey, "FERRY_HOME": home, "FERRY_PROFILE": "phone"]
            )
            let step = await sync.waitForLine(startingWith: "progress: pushed")
            #expect(step != nil, "the sync reported a first acknowledged batch")
            sync.signal(SIGKILL)
            let killed = await sync.waitForExit()
            #expect(killed.status != 0 || killed.stdout.contains("Synced"))

            let doctor = try await phone.json(["doctor"])
            #expect(doctor["healthy"] as? Bool == true, "the store survives a SIGKILL")
            let resumed = try await phone.json(["sync"])
            #expect(resumed["pending"] as? Int == 0 && resumed["rejected"] as? Int == 0)
            #expect((resumed["pushed"] as? Int ?? count) <= count - 2, "the batch acknowledged before the kill is not sent again")
            let pulled = try await pad.json(["sync"])
            #expect(pulled["applied"] as? Int == count)
            #expect((try await pad.json(["ls", "sermons"])["records"] as? [Any])?.count == count)
        }
    }

    @Test("after ferry reset and a new login, the next writes reach the server and the other device", arguments: TestEngine.available)
    func writesAfterReset(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (phone, pad, email) = try await Device.pair(server, home: home, name: "reset")
            for index in 1...3 {
                _ = try await phone.ok(["put", "sermons", "title=Sermon \(index)", "date=2026-11-01T10:00:00Z"])
            }
            #expect(try await phone.json(["sync"])["pushed"] as? Int == 3)

            // The store is made again under the kept device id, so its mutation ids start over.
            _ = try await phone.ok(["reset"])
            #expect(try await phone.run(["login", email], password: "correct horse 1").status == 0)
            _ = try await phone.ok(["put", "sermons", "title=Sermon 4", "date=2026-11-01T10:00:00Z"])
            let synced = try await phone.json(["sync"])
            #expect(synced["pending"] as? Int == 0 && synced["rejected"] as? Int == 0)

            _ = try await pad.json(["sync"])
            let titles = (try await pad.json(["ls", "sermons"])["records"] as? [[String: Any]] ?? []).compactMap { ($0["fields"] as? [String: Any])?["title"] as? String }
            #expect(Set(titles) == ["Sermon 1", "Sermon 2", "Sermon 3", "Sermon 4"], "the write after the reset reached the other device: \(titles)")
        }
    }
}
