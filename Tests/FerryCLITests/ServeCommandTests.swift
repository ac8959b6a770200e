import FerryServer
import FerryTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `ferry serve` as a person runs it: flags, environment, start-up failures, schema changes, signals.
@Suite("ferry serve")
struct ServeCommandTests {
    static let schemaV1 = """
        collections:
          sermons:
            fields:
              title: { type: text, required: true }
              audio: blob
          notes:
            parent: { collection: sermons, field: sermon_id }
            fields:
              body: text
        """

    /// A start-up failure is one error line (the last on standard error, after any log lines),
    /// a non-zero status and no stack trace.
    func expectOneLineFailure(_ exit: FerryProcess.Exit, containing fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(exit.status != 0, sourceLocation: sourceLocation)
        let lines = exit.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.filter { $0.hasPrefix("ferry: error: ") }.count == 1, "stderr: \(exit.stderr)", sourceLocation: sourceLocation)
        #expect(lines.last?.hasPrefix("ferry: error: ") == true, "stderr: \(exit.stderr)", sourceLocation: sourceLocation)
        #expect(
            lines.dropLast().allSatisfy { $0.range(of: #" (info|notice|warning) ferry: "#, options: .regularExpression) != nil },
            "only log lines precede it", sourceLocation: sourceLocation
        )
        #expect(exit.stderr.contains(fragment), "stderr: \(exit.stderr)", sourceLocation: sourceLocation)
        // One format everywhere: `ferry: error: message (code)`.
        #expect(lines.last?.range(of: #" \([a-z_]+\)$"#, options: .regularExpression) != nil, "no (code): \(exit.stderr)", sourceLocation: sourceLocation)
        #expect(!exit.stderr.contains("Fatal error") && !exit.stderr.contains("Stack dump"), sourceLocation: sourceLocation)
    }

    @Test("bad flags and settings end with one line", arguments: [
        (["serve", "--bogus"], "--bogus"),
        (["serve", "--port", "70000"], "between 0 and 65535"),
        (["serve", "--port", "eighty"], "eighty"),
        (["serve", "--log-level", "loud"], "unknown log level 'loud'"),
        (["serve", "--database", "mysql://x@y/z"], "unsupported database URL scheme"),
        (["serve", "--database", "postgres://localhost/db"], "needs a user name"),
        (["serve", "--database", "postgres://u:hunter2@localhost"], "needs a database name"),
        (["serve", "--schema", "/nonexistent/schema.yaml"], "/nonexistent/schema.yaml: cannot read the file"),
        (["serve", "--session-timebox", "0"], "--session-timebox must be between 1 and"),
        (["serve", "--max-clock-skew", "0"], "--max-clock-skew must be between 1 and"),
        (["serve", "--tombstone-retention", "soon"], "invalid"),
        (["serve", "--access-token-lifetime", "9223372036854775807"], "--access-token-lifetime must be between 1 and"),
        (["serve", "--jwt-secret", "short"], "at least 32 characters"),
        (["serve", "--github-token-url", "http://github.example.com/token"], "must use https (http only to a loopback address)"),
        (["serve", "--trusted-proxy", "10.0.0.0/33"], "--trusted-proxy must be an address or CIDR"),
        (["serve", "--metrics-token", "short"], "at least 16 characters"),
        (["serve", "--idle-timeout", "0"], "--idle-timeout must be between 1 and"),
        (["serve", "--max-spaces-per-account", "0"], "--max-spaces-per-account must be between 1 and 1000000"),
        (["serve", "--max-pushes-in-flight", "0"], "--max-pushes-in-flight must be between 1 and 1000000"),
        (["serve", "--carried-change-bytes", "70000"], "--carried-change-bytes must be between 0 and 65536"),
        (["serve", "--carried-change-bytes=-1"], "--carried-change-bytes must be between 0 and 65536"),
        (["serve", "--password-hash-cost", "9"], "--password-hash-cost must be between 10 and 20"),
        (["serve", "--password-hash-cost", "21"], "--password-hash-cost must be between 10 and 20"),
        (["serve", "--forwarded-header", "x-real-ip"], "--forwarded-header is x-forwarded-for or forwarded"),
        (["serve", "--public-url", "sync.example.com"], "--public-url must be an http or https URL"),
        (["serve", "--public-url", "ftp://sync.example.com"], "--public-url must be an http or https URL"),
        (["serve", "--max-signed-url-seconds", "0"], "--max-signed-url-seconds must be between 1 and"),
        (["serve", "--max-open-uploads-per-account", "0"], "--max-open-uploads-per-account must be between 1 and 1000000"),
        (["serve", "--max-stored-mib-per-account", "0"], "--max-stored-mib-per-account must be between 1 and 1000000"),
        (["serve", "--smtp-url", "smtp://u:hunter2@mail.example.com"], "--smtp-url needs --smtp-sender"),
        (["serve", "--smtp-url", "ftp://u:hunter2@mail.example.com", "--smtp-sender", "a@example.com"], "--smtp-url or --smtp-sender"),
        (["serve", "--smtp-url", "smtp://mail.example.com", "--smtp-sender", "not an address"], "--smtp-url or --smtp-sender"),
        (["serve", "--apple-keys-url", "http://apple.example.com/keys"], "--apple-keys-url must be an https URL"),
        (["serve", "--site-url", "javascript:alert(1)"], "--site-url must be a URL"),
        (["serve", "--mail-code-lifetime", "0"], "--mail-code-lifetime must be between 1 and"),
        (["serve", "--backup-every", "0"], "--backup-every must be between 1 and"),
        (["serve", "--backup-keep", "0"], "--backup-keep must be between 1 and 10000"),
        (["serve", "--backup-every", "60", "--database", "postgres://u@localhost/db"], "--backup-every backs up the embedded database only"),
        (["serve", "--blob-dir", "/tmp/ferry-blobs"], "--blob-dir is for PostgreSQL"),
        (["serve", "--blob-dir", "/tmp/ferry-blobs", "--database", "sqlite:/tmp/ferry.sqlite"], "--blob-dir is for PostgreSQL"),
    ])
    func badFlags(_ arguments: [String], _ fragment: String) async throws {
        let exit = try await FerryProcess.run(arguments + ["--data-dir", NSTemporaryDirectory() + "ferry-cli-\(UUID())"])
        expectOneLineFailure(exit, containing: fragment)
        #expect(!exit.stderr.contains("hunter2"), "passwords never appear in errors")
    }

    @Test("a bad setting in the environment ends with one line")
    func badEnvironment() async throws {
        let exit = try await FerryProcess.run(["serve"], environment: ["FERRY_PORT": "abc"])
        expectOneLineFailure(exit, containing: "FERRY_PORT must be a number")
    }

    @Test("an invalid schema file names the file, line and path")
    func invalidSchema() async throws {
        let folder = NSTemporaryDirectory() + "ferry-cli-\(UUID())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let schema = folder + "/bad.yaml"
        try "collections:\n  notes:\n    fields:\n      body: strng\n".write(toFile: schema, atomically: true, encoding: .utf8)
        let exit = try await FerryProcess.run(["serve", "--data-dir", folder, "--schema", schema])
        expectOneLineFailure(exit, containing: "\(schema):4: collections.notes.fields.body: unknown type 'strng'")
    }

    @Test("an unreachable PostgreSQL ends start-up with one line, without the password")
    func unreachablePostgres() async throws {
        let port = try freePort()
        // Its own data folder: the keys are made there before the database is tried, never in the checkout.
        let folder = NSTemporaryDirectory() + "ferry-cli-\(UUID())"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let exit = try await FerryProcess.run([
            "serve", "--port", "0", "--data-dir", folder, "--database", "postgres://ferry:hunter2@127.0.0.1:\(port)/ferry?sslmode=disable",
        ])
        expectOneLineFailure(exit, containing: "cannot reach PostgreSQL at ferry@127.0.0.1:\(port)/ferry")
        #expect(!exit.stderr.contains("hunter2"))
    }

    @Test("a port in use ends start-up with one line")
    func portInUse() async throws {
        try await LiveServer.with(.sqlite) { server in
            let port = try #require(server.baseURL.port)
            let folder = NSTemporaryDirectory() + "ferry-cli-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let exit = try await FerryProcess.run(["serve", "--port", "\(port)", "--data-dir", folder])
            expectOneLineFailure(exit, containing: "127.0.0.1:\(port) is already in use")
        }
    }

    @Test("serve prints where it listens, answers /health, migrates additively, refuses a removed field, stops on SIGTERM",
          arguments: TestEngine.available)
    func lifecycle(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let schema = database.folder + "/app.yaml"
            var arguments = ["serve", "--port", "0", "--data-dir", database.folder, "--schema", schema]
            if case .postgres(let url) = database.location {
                arguments += ["--database", "postgres://\(url.username)@\(url.host):\(url.port)/\(url.database)?sslmode=disable"]
            }

            try Self.schemaV1.write(toFile: schema, atomically: true, encoding: .utf8)
            try await serveOnce(arguments, expectingStore: engine == .sqlite ? "SQLite at" : "PostgreSQL at")
            #expect(try await database.columns(of: "notes")["body"] != nil)

            let v2 = Self.schemaV1.replacingOccurrences(of: "audio: blob", with: "audio: blob\n      speaker: text")
            try v2.write(toFile: schema, atomically: true, encoding: .utf8)
            try await serveOnce(arguments, expectingStore: nil)
            #expect(try await database.columns(of: "sermons")["speaker"] != nil)

            let v3 = v2.replacingOccurrences(of: "      audio: blob\n", with: "")
            try v3.write(toFile: schema, atomically: true, encoding: .utf8)
            let refused = try await FerryProcess.run(arguments)
            expectOneLineFailure(refused, containing: "sermons.audio: the field was removed")
            #expect(try await database.columns(of: "sermons")["audio"] != nil)
        }
    }

    /// Starts the server, checks the banner and `/health`, then stops it with SIGTERM and expects a clean exit.
    func serveOnce(_ arguments: [String], expectingStore store: String?) async throws {
        let process = try FerryProcess(arguments)
        let prefix = "Ferry listening on http://127.0.0.1:"
        let banner = try #require(await process.waitForLine(startingWith: prefix))
        if let store { #expect(banner.contains(store)) }
        let port = try #require(Int(banner.dropFirst(prefix.count).prefix { $0.isNumber }))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/health")!)
        request.httpMethod = "HEAD"
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        process.signal(SIGTERM)
        let exit = await process.waitForExit()
        #expect(exit.status == 0, "stderr: \(exit.stderr)")
    }

    @Test("--print-keys prints the anon and service-role keys the server checks, one line each, without opening the database")
    func printKeys() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let configuration = database.serverConfiguration
            let server = try await LiveServer.start(configuration)
            let keys = server.server.keys
            await server.stop()
            // A schema that would be refused as destructive: --print-keys must not even look.
            let exit = try await FerryProcess.run(["serve", "--print-keys", "--data-dir", database.folder, "--schema", "/nonexistent.yaml"])
            #expect(exit.status == 0, "stderr: \(exit.stderr)")
            #expect(exit.stdout == "anon key: \(keys.anonKey)\nservice_role key: \(keys.serviceRoleKey)\n")
            #expect(keys.anonKey != keys.serviceRoleKey)
            let stored = database.folder + "/keys/service-role-key"
            #expect(try FileManager.default.attributesOfItem(atPath: stored)[.posixPermissions] as? Int == 0o600, "owner-only")
        }
    }

    @Test("settings come from FERRY_ variables when no flag is given")
    func environmentSettings() async throws {
        let folder = NSTemporaryDirectory() + "ferry-cli-\(UUID())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.schemaV1.write(toFile: folder + "/app.yaml", atomically: true, encoding: .utf8)
        let process = try FerryProcess(["serve"], environment: [
            "FERRY_PORT": "0", "FERRY_DATA_DIR": folder, "FERRY_SCHEMA": folder + "/app.yaml", "FERRY_LOG_LEVEL": "warning",
        ])
        let banner = try #require(await process.waitForLine(startingWith: "Ferry listening on"))
        #expect(banner.contains("SQLite at \(folder)/ferry.sqlite"))
        process.signal(SIGINT)
        let exit = await process.waitForExit()
        #expect(exit.status == 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/ferry.sqlite"))
        #expect(!exit.stderr.contains(" info "), "FERRY_LOG_LEVEL=warning silences info lines")
    }

    @Test("per-account caps and the password hash cost come from flags or FERRY_ variables: FERRY_MAX_SPACES_PER_ACCOUNT=1 leaves room for the personal space only")
    func capsFromEnvironment() async throws {
        let folder = NSTemporaryDirectory() + "ferry-cli-\(UUID())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = try FerryProcess(["serve", "--port", "0", "--data-dir", folder + "/data", "--log-level", "warning"], environment: [
            "FERRY_MAX_SPACES_PER_ACCOUNT": "1", "FERRY_PASSWORD_HASH_COST": "11",
        ])
        defer { process.killIfRunning() }
        let prefix = "Ferry listening on "
        let banner = try #require(await process.waitForLine(startingWith: prefix))
        let base = String(banner.dropFirst(prefix.count).prefix { !$0.isWhitespace })
        let anonKey = try String(contentsOfFile: folder + "/data/keys/anon-key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let client = ["FERRY_HOME": folder + "/client", "FERRY_SERVER": base, "FERRY_API_KEY": anonKey]
        let signUp = try await FerryProcess.run(["signup", "caps@example.com", "--password-stdin"], environment: client, input: "correct horse 1\n")
        #expect(signUp.status == 0, "\(signUp.stderr)")
        let create = try await FerryProcess.run(["spaces", "create", "One too many"], environment: client)
        #expect(create.status != 0 && create.stderr.contains("too_many_spaces"), "\(create.stderr)")
        process.signal(SIGTERM)
        let exit = await process.waitForExit()
        #expect(exit.stderr.contains("cheaper than OWASP's minimum"), "a cost below 17 is warned of: \(exit.stderr)")
        let storage = try SQLiteStorage(path: folder + "/data/ferry.sqlite")
        let user = try await storage.user(email: "caps@example.com")
        try await storage.close()
        #expect(user?.passwordHash.hasPrefix("$scrypt$ln=11,r=8,p=1$") == true, "hashed at FERRY_PASSWORD_HASH_COST")
    }
}
