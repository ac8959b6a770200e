import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The client commands as a person uses them: sign-up, launch routes, profile, offline, sign-out, reset.
@Suite("ferry client commands")
struct ClientCommandTests {
    struct Client {
        var server: URL
        var apiKey: String
        var home: String

        func run(_ arguments: [String], password: String? = nil, input: String? = nil) async throws -> FerryProcess.Exit {
            // A loaded machine can take longer than the 3 s default to answer /health; offline must mean down here.
            var environment = ["FERRY_SERVER": server.absoluteString, "FERRY_API_KEY": apiKey, "FERRY_HOME": home, "FERRY_PROBE_TIMEOUT": "30"]
            if let password { environment["FERRY_PASSWORD"] = password }
            return try await FerryProcess.run(arguments, environment: environment, input: input)
        }

        func route() async throws -> [String: Any] {
            let exit = try await run(["status", "--json"])
            #expect(exit.status == 0, "stderr: \(exit.stderr)")
            return try JSONSerialization.jsonObject(with: Data(exit.stdout.utf8)) as? [String: Any] ?? [:]
        }
    }

    @Test("welcome → signIn → onboarding → main; offline keeps the session; a restart needs no password; logout and reset",
          arguments: TestEngine.available)
    func launchJourney(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var configuration = database.endToEndConfiguration(schemaFile: ExampleSchemas.path("lingo.yaml"))
            configuration.healthTimeout = .seconds(30)  // a first PostgreSQL connection on a loaded machine can take seconds
            var server = try await LiveServer.start(configuration)
            let port = try #require(server.baseURL.port)
            let client = Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/home")
            let email = uniqueEmail("ada")
            let password = "correct horse 1"

            #expect(try await client.route()["route"] as? String == "welcome")
            #expect(try await client.route()["route"] as? String == "signIn")

            let signup = try await client.run(["signup", email, "--password-stdin"], input: password + "\n")
            #expect(signup.status == 0, "stderr: \(signup.stderr)")
            #expect(signup.stdout.contains("Signed up and signed in as \(email)"))
            #expect(!(signup.stdout + signup.stderr).contains(password), "the password is never printed")

            let onboarding = try await client.route()
            #expect(onboarding["route"] as? String == "onboarding")
            #expect(onboarding["missing"] as? [String] == ["first_name", "native_language", "learning_languages"])

            let set = try await client.run(["profile", "set", "first_name=Ada", "native_language=en", #"learning_languages=["fr","de"]"#])
            #expect(set.status == 0, "stderr: \(set.stderr)")
            #expect(set.stdout.hasPrefix("Profile complete"))
            #expect(try await client.route()["route"] as? String == "main")

            // The server goes away: offline, and the session file stays (mode 0600).
            await server.stop()
            let sessionFile = client.home + "/profiles/default/session.json"
            let offline = try await client.route()
            #expect(offline["route"] as? String == "offline")
            #expect(FileManager.default.fileExists(atPath: sessionFile))
            let mode = try FileManager.default.attributesOfItem(atPath: sessionFile)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)

            // It comes back on the same port: main again, no password asked.
            server = try await LiveServer.start(configuration, port: port)
            #expect(try await client.route()["route"] as? String == "main")
            let whoami = try await client.run(["whoami"])
            #expect(whoami.stdout.hasPrefix(email))

            // Another spelling of the same server keeps the session; a really different server says why it signs out.
            let localhost = Client(server: URL(string: "http://localhost:\(port)/")!, apiKey: client.apiKey, home: client.home)
            let respelled = try await localhost.run(["whoami"])
            #expect(respelled.stdout.hasPrefix(email), "localhost and 127.0.0.1 are one server: \(respelled.stderr)")
            let moved = try await Client(server: URL(string: "http://127.0.0.1:1")!, apiKey: client.apiKey, home: client.home).run(["whoami"])
            #expect(moved.stderr.contains("moved from") && moved.stderr.contains("signed out"), "\(moved.stderr)")
            #expect(!FileManager.default.fileExists(atPath: sessionFile))
            let relogin = try await client.run(["login", email], password: password)
            #expect(relogin.status == 0, "stderr: \(relogin.stderr)")

            #expect(try await client.run(["logout"]).status == 0)
            #expect(try await client.route()["route"] as? String == "signIn")
            #expect(!FileManager.default.fileExists(atPath: sessionFile))

            let login = try await client.run(["login", email], password: password)
            #expect(login.status == 0, "stderr: \(login.stderr)")
            #expect(try await client.route()["route"] as? String == "main", "a returning user with a profile goes to main")
            #expect(try await client.run(["reset"]).status == 0)
            #expect(try await client.route()["route"] as? String == "welcome", "the debug reset starts over")
            await server.stop()
        }
    }

    @Test("wrong passwords, missing passwords and missing settings end with one line")
    func failures() async throws {
        try await LiveServer.with(.sqlite, configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let client = Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home)
            let email = uniqueEmail("bob")
            #expect(try await client.run(["signup", email], password: "correct horse 1").status == 0)

            let wrong = try await client.run(["login", email], password: "wrong horse 1")
            #expect(wrong.status == 1)
            #expect(wrong.stderr == "ferry: error: Invalid login credentials (invalid_credentials)\n")

            let noPassword = try await client.run(["login", email])
            #expect(noPassword.status == 64)
            #expect(noPassword.stderr.contains("no password: use --password-stdin, set FERRY_PASSWORD"))

            let noServer = try await FerryProcess.run(["status"], environment: ["FERRY_HOME": home + "/other"])
            #expect(noServer.stderr.contains("no server for profile 'default'"))
            let wrongKey = try await Client(server: server.baseURL, apiKey: "nope", home: home + "/third").run(["login", email], password: "x")
            #expect(wrongKey.stderr.contains("invalid_api_key"))
        }
    }

    @Test("ferry account delete --yes ends the other devices' sessions; signing in again fails; no record or address remains",
          arguments: TestEngine.available)
    func accountDelete(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var configuration = database.endToEndConfiguration(schemaFile: ExampleSchemas.path("tabletnotes.yaml"))
            configuration.healthTimeout = .seconds(30)
            let server = try await LiveServer.start(configuration)
            let phone = Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/phone")
            let tablet = Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/tablet")
            let email = uniqueEmail("leaving")
            let password = "correct horse 1"
            #expect(try await phone.run(["signup", email], password: password).status == 0)
            #expect(try await tablet.run(["login", email], password: password).status == 0)
            let put = try await phone.run(["put", "sermons", "title=Grace", "date=2026-11-21T10:00:00Z"])
            #expect(put.status == 0, "stderr: \(put.stderr)")
            #expect(try await phone.run(["sync"]).status == 0)
            let userID = try await database.strings("SELECT id FROM ferry_users WHERE email = '\(email)'").first ?? ""
            #expect(!userID.isEmpty)

            let unconfirmed = try await phone.run(["account", "delete"], input: "")
            #expect(unconfirmed.status != 0 && unconfirmed.stderr.contains("--yes"), "off a terminal, only --yes confirms: \(unconfirmed.stderr)")
            let deleted = try await phone.run(["account", "delete", "--yes"])
            #expect(deleted.status == 0, "stderr: \(deleted.stderr)")
            #expect(deleted.stdout.contains("Deleted the account \(email)"))

            let tabletSync = try await tablet.run(["sync"])
            #expect(tabletSync.status != 0, "the tablet's session ended: \(tabletSync.stdout)")
            let relogin = try await tablet.run(["login", email], password: password)
            #expect(relogin.status != 0 && relogin.stderr.contains("invalid_credentials"), "\(relogin.stderr)")
            #expect(try await database.integer("SELECT count(*) FROM sermons WHERE _space = '\(userID)'") == 0)
            #expect(try await database.integer("SELECT count(*) FROM ferry_users WHERE email = '\(email)'") == 0, "the address is free")
            await server.stop()
        }
    }
}
