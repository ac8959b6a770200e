import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// What a newcomer meets in the first hour: every error is one line `message (code)` that says what to do, names are
/// suggested when mistyped, spaces go by name, and a profile stuck on an old schema is told the way out.
@Suite("The first hour")
struct FirstHourTests {
    typealias Device = DataCommandTests.Device

    static func expectOneLine(_ exit: FerryProcess.Exit, _ fragment: String, code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(exit.status != 0, "\(exit.stdout)", sourceLocation: sourceLocation)
        let lines = exit.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("ferry: error: "), "\(exit.stderr)", sourceLocation: sourceLocation)
        #expect(exit.stderr.contains(fragment), "\(exit.stderr)", sourceLocation: sourceLocation)
        #expect(exit.stderr.hasSuffix(" (\(code))\n"), "\(exit.stderr)", sourceLocation: sourceLocation)
    }

    @Test("errors are one line 'message (code)' that say what to do", arguments: TestEngine.available)
    func errors(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let stranger = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "nobody")
            Self.expectOneLine(try await stranger.run(["ls", "sermons"]), "run 'ferry login EMAIL' first", code: "not_signed_in")

            let (phone, _, _) = try await Device.pair(server, home: home, name: "first")
            _ = try await phone.ok(["sync"])
            #expect(try await phone.ok(["ls", "sermons"]).contains("No records in 'sermons'"), "an empty collection says so")
            Self.expectOneLine(try await phone.run(["ls", "sermon"]), "did you mean 'sermons'?", code: "unknown_collection")
            Self.expectOneLine(try await phone.run(["put", "sermons", "titel=x"]), "did you mean 'title'?", code: "unknown_field")
            let sermon = try await phone.ok(["put", "sermons", "title=Grace", "date=2026-11-01T10:00:00Z"]).trimmingCharacters(in: .whitespacesAndNewlines)
            Self.expectOneLine(try await phone.run(["put", "notes", "sermon_id=\(sermon)", "timestamp=soon"]), "for a real field, not \"soon\"", code: "type_mismatch")
            Self.expectOneLine(try await phone.run(["put", "sermons", "--id", sermon, "audio=@/nonexistent/a.m4a"]), "/nonexistent/a.m4a", code: "no_input")
            Self.expectOneLine(try await phone.run(["profile", "set"]), "ferry profile set FIELD=VALUE", code: "invalid_arguments")
            Self.expectOneLine(try await phone.run(["put"]), "usage:", code: "invalid_arguments")
            let help = try await phone.run(["sync", "--help"])
            #expect(!help.stdout.contains("[default: 1000] (default: 1000)"), "a default is said once")
        }
    }

    @Test("spaces go by name; leaving one clears its records from the device; logout tells of unsent changes", arguments: TestEngine.available)
    func spacesByName(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (owner, _, _) = try await Device.pair(server, home: home, name: "owner")
            let guest = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "guest")
            let guestEmail = uniqueEmail("guest")
            _ = try await guest.run(["signup", guestEmail], password: "correct horse 1")
            let space = try await owner.ok(["spaces", "create", "Team"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let code = try await owner.ok(["spaces", "invite", "Team", guestEmail]).trimmingCharacters(in: .whitespacesAndNewlines)
            _ = try await guest.ok(["spaces", "join", code])
            _ = try await owner.ok(["put", "sermons", "title=Shared", "date=2026-11-01T10:00:00Z", "--space", "team"])
            _ = try await owner.ok(["sync"])
            _ = try await guest.ok(["sync"])
            #expect(try await guest.ok(["ls", "sermons"]).contains("Shared"))
            Self.expectOneLine(try await guest.run(["spaces", "members", "Teem"]), "did you mean 'Team'?", code: "unknown_space")

            _ = try await guest.ok(["spaces", "leave", "Team"])
            #expect(try await guest.ok(["ls", "sermons"]).contains("No records"), "a left space's records are gone from the device")
            #expect(try await owner.ok(["spaces", "members", space]).contains("owner"))

            _ = try await owner.ok(["put", "sermons", "title=Offline", "date=2026-11-01T10:00:00Z"])
            let logout = try await owner.ok(["logout"])
            #expect(logout.contains("1 unsent change(s) stay on this device"), "\(logout)")
        }
    }

    @Test("a profile whose store cannot follow a new schema is told to run 'ferry reset'", arguments: TestEngine.available)
    func schemaOutdated(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { first in
            let server = try await LiveServer.start(first.endToEndConfiguration(schemaFile: ExampleSchemas.path("tabletnotes.yaml")))
            let port = try #require(server.baseURL.port)
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let phone = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "phone")
            let email = uniqueEmail("schema")
            _ = try await phone.run(["signup", email], password: "correct horse 1")
            _ = try await phone.ok(["sync"])
            await server.stop()

            try await TestDatabase.with(engine) { second in
                let next = try await LiveServer.start(second.endToEndConfiguration(schemaFile: ExampleSchemas.path("lingo.yaml")), port: port)
                defer { Task { await next.stop() } }
                let moved = Device(server: next.baseURL, apiKey: next.server.keys.anonKey, home: home, profile: "phone")
                let login = try await moved.run(["signup", email], password: "correct horse 1")
                #expect(login.stderr.contains("ferry reset"), "\(login.stderr)")
                let sync = try await moved.run(["sync"])
                Self.expectOneLine(sync, "run 'ferry reset'", code: "schema_outdated")
                _ = try await moved.ok(["reset"])
                #expect(try await moved.run(["login", email], password: "correct horse 1").status == 0)
                #expect(try await moved.run(["sync"]).status == 0, "after the reset the profile follows the new schema")
                await next.stop()
            }
        }
    }
}
