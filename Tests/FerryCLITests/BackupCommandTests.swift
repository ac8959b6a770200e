import FerryServer
import FerryTesting
import Foundation
import Synchronization
import Testing

/// `ferry backup create|verify|restore` as an operator runs them, against a live embedded server.
@Suite("CLI: backups")
struct BackupCommandTests {
    @Test("a backup taken while the server runs restores onto the stopped server; a damaged one and a running server are refused")
    func backupAndRestore() async throws {
        try await TestDatabase.with(.sqlite) { database in
            var configuration = database.endToEndConfiguration(schemaFile: ExampleSchemas.path("tabletnotes.yaml"))
            configuration.healthTimeout = .seconds(30)
            var server = try await LiveServer.start(configuration)
            let port = try #require(server.baseURL.port)
            let phone = ClientCommandTests.Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/phone")
            let email = uniqueEmail("backup")
            #expect(try await phone.run(["signup", email], password: "correct horse 1").status == 0)
            #expect(try await phone.run(["put", "sermons", "title=Before", "date=2026-11-21T10:00:00Z"]).status == 0)
            #expect(try await phone.run(["sync"]).status == 0)

            // Backups live outside the data directory, in a folder of the test's own.
            let backups = try TemporaryFolder()
            defer { backups.remove() }
            let created = try await phone.run(["backup", "create", "--data-dir", database.folder, "--to", backups.url.path, "--json"])
            #expect(created.status == 0, "\(created.stderr)")
            let backup = try #require((try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["backup"] as? String)
            #expect(try await phone.run(["backup", "verify", backup]).status == 0)

            #expect(try await phone.run(["put", "sermons", "title=After", "date=2026-11-22T10:00:00Z"]).status == 0)
            #expect(try await phone.run(["sync"]).status == 0)
            let whileRunning = try await phone.run(["backup", "restore", backup, "--data-dir", database.folder, "--yes"])
            #expect(whileRunning.status != 0 && whileRunning.stderr.contains("server_running"), "\(whileRunning.stderr)")

            // A damaged copy is refused by verify and by restore.
            let damaged = backup + "-damaged"
            try FileManager.default.copyItem(atPath: backup, toPath: damaged)
            let handle = try FileHandle(forWritingTo: URL(filePath: damaged + "/ferry.sqlite"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([0]))
            try handle.close()
            let check = try await phone.run(["backup", "verify", damaged])
            #expect(check.status != 0 && check.stderr.contains("backup_damaged"), "\(check.stderr)")

            await server.stop()
            #expect(try await phone.run(["backup", "restore", damaged, "--data-dir", database.folder, "--yes"]).status != 0)
            let restored = try await phone.run(["backup", "restore", backup, "--data-dir", database.folder, "--yes"])
            #expect(restored.status == 0, "\(restored.stderr)")
            server = try await LiveServer.start(configuration, port: port)

            // The phone synced past the backup: its cursor is ahead of the restored server, which starts the space over.
            #expect(try await phone.run(["put", "sermons", "title=Offline edit", "date=2026-11-23T10:00:00Z"]).status == 0)
            let resync = try await phone.run(["sync"])
            #expect(resync.status == 0, "\(resync.stderr)")
            #expect(resync.stdout.contains("pulled 1") || resync.stdout.contains("pulled 2"), "the space started over: \(resync.stdout)")
            let tablet = ClientCommandTests.Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/tablet")
            #expect(try await tablet.run(["login", email], password: "correct horse 1").status == 0, "the account and its keys came back")
            let listed = try await tablet.run(["ls", "sermons"])
            #expect(listed.stdout.contains("Before") && listed.stdout.contains("Offline edit"), "list: \(listed.stdout) \(listed.stderr) resync: \(resync.stdout)")
            #expect(!listed.stdout.contains("After"), "what came after the backup is gone from the server")
            await server.stop()
        }
    }

    @Test(
        "a backup taken while a device pushes in a loop holds every write acknowledged before it began and its files byte for byte (ferry backup; pg_dump with docs/operations.md's recipe)",
        arguments: TestEngine.available
    )
    func backupUnderLoad(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var configuration = database.endToEndConfiguration(schemaFile: ExampleSchemas.path("tabletnotes.yaml"))
            configuration.healthTimeout = .seconds(30)
            var server = try await LiveServer.start(configuration)
            let port = try #require(server.baseURL.port)
            let phone = ClientCommandTests.Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/phone")
            let email = uniqueEmail("load")
            #expect(try await phone.run(["signup", email], password: "correct horse 1").status == 0)
            let audio = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
            let audioPath = database.folder + "/sermon.m4a"
            try audio.write(to: URL(filePath: audioPath))
            let put = try await phone.run(["put", "sermons", "title=With audio", "date=2026-11-21T10:00:00Z", "audio=@\(audioPath)"])
            let sermon = put.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(put.status == 0, "\(put.stderr)")
            #expect(try await phone.run(["sync"]).status == 0)

            // The device writes and syncs in a loop; each title is acknowledged once its sync exits 0.
            let acknowledged = Mutex<[(title: String, at: ContinuousClock.Instant)]>([])
            let writer = Task {
                var index = 0
                while !Task.isCancelled {
                    index += 1
                    let title = "Load \(index)"
                    guard try await phone.run(["put", "sermons", "title=\(title)", "date=2026-11-22T10:00:00Z"]).status == 0 else { continue }
                    if try await phone.run(["sync"]).status == 0 { acknowledged.withLock { $0.append((title, .now)) } }
                }
            }
            try await eventually("three writes acknowledged") { acknowledged.withLock { $0.count } >= 3 }
            let backupBegan = ContinuousClock.now
            let backup = try await Self.backUp(database, phone: phone)
            try await eventually("a write acknowledged after the backup began") { acknowledged.withLock { $0.last.map { $0.at > backupBegan } ?? false } }
            writer.cancel()
            _ = try? await writer.value
            let before = acknowledged.withLock { $0.filter { $0.at < backupBegan }.map(\.title) }
            #expect(!before.isEmpty)

            await server.stop()
            try await Self.restore(backup, database, phone: phone)
            server = try await LiveServer.start(configuration, port: port)

            let tablet = ClientCommandTests.Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/tablet")
            #expect(try await tablet.run(["login", email], password: "correct horse 1").status == 0)
            let listed = try await tablet.run(["ls", "sermons"])
            for title in before + ["With audio"] {
                #expect(listed.stdout.contains(title), "\(title), acknowledged before the backup began, is served: \(listed.stdout)")
            }
            let copy = database.folder + "/copy.m4a"
            let fetched = try await tablet.run(["blob", "get", "sermons", sermon, "audio", "-o", copy])
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(FileManager.default.contents(atPath: copy) == audio, "the file came back byte for byte")

            // The phone synced past the backup: it starts its space over and keeps working, nothing of its outbox lost.
            #expect(try await phone.run(["put", "sermons", "title=After the restore", "date=2026-11-23T10:00:00Z"]).status == 0)
            let resync = try await phone.run(["sync"])
            #expect(resync.status == 0, "\(resync.stderr)")
            #expect(try await tablet.run(["sync"]).status == 0)
            #expect(try await tablet.run(["ls", "sermons"]).stdout.contains("After the restore"))
            await server.stop()
        }
    }

    /// `ferry backup create` on the embedded database; `pg_dump --format=custom` on PostgreSQL. Returns the backup's path.
    static func backUp(_ database: TestDatabase, phone: ClientCommandTests.Client) async throws -> String {
        switch database.location {
        case .sqlite:
            let created = try await phone.run(["backup", "create", "--data-dir", database.folder, "--json"])
            #expect(created.status == 0, "\(created.stderr)")
            return try #require((try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["backup"] as? String)
        case .postgres(let url):
            let dump = database.folder + "/ferry.dump"
            try PostgresTool.run("pg_dump", ["--format=custom", "--file", dump, "--dbname", PostgresTool.uri(url)])
            return dump
        }
    }

    /// `ferry backup restore`; or `pg_restore` and then the renumbering docs/operations.md gives, in one transaction.
    static func restore(_ backup: String, _ database: TestDatabase, phone: ClientCommandTests.Client) async throws {
        switch database.location {
        case .sqlite:
            let restored = try await phone.run(["backup", "restore", backup, "--data-dir", database.folder, "--yes"])
            #expect(restored.status == 0, "\(restored.stderr)")
        case .postgres(let url):
            let uri = PostgresTool.uri(url)
            try PostgresTool.run("pg_restore", ["--clean", "--if-exists", "--no-owner", "--dbname", uri, backup])
            let tables = try PostgresTool.run("psql", ["--no-psqlrc", "--tuples-only", "--no-align", "--dbname", uri, "--command",
                "SELECT table_name FROM information_schema.columns WHERE column_name = '_seq' AND table_schema = current_schema();"])
                .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            #expect(tables.contains("sermons"), "\(tables)")
            let renumber = ["BEGIN;"] + tables.map { "UPDATE \"\($0)\" SET _seq = _seq + 1099511627776;" }
                + ["UPDATE ferry_spaces SET seq = seq + 1099511627776, purged_seq = purged_seq + 1099511627776;", "COMMIT;"]
            try PostgresTool.run("psql", ["--no-psqlrc", "--set", "ON_ERROR_STOP=1", "--dbname", uri, "--command", renumber.joined(separator: "\n")])
        }
    }
}

/// PostgreSQL's own programs (the newest installed version's), as an operator runs them.
enum PostgresTool {
    static func uri(_ url: PostgresURL) -> String {
        "postgresql://\(url.username)@\(url.host):\(url.port)/\(url.database)?sslmode=disable"
    }

    /// Runs `tool` and returns its standard output; a non-zero exit fails with its standard error.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).max().map { "/usr/lib/postgresql/\($0)/bin/\(tool)" }
        let process = try ChildProcess(newest ?? tool, arguments: arguments, environment: ["PATH": "/usr/bin:/bin"])
        let output = String(decoding: process.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let errors = String(decoding: process.standardError?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let status = process.waitUntilExit()
        guard status == 0 else { throw CommandError(message: "\(tool) exited \(status): \(errors)") }
        return output
    }
}

/// A PostgreSQL program that failed, with what it said.
struct CommandError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
