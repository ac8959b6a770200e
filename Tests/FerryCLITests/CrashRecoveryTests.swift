import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The server killed with SIGKILL in the middle of a large push loses nothing and duplicates nothing
/// (DESIGN.md §6 invariants 1 and 3).
@Suite("Crash recovery")
struct CrashRecoveryTests {
    static let recordCount = 10_000

    @Test("SIGKILL mid-push of 10,000 mutations: after a restart one more `ferry sync` leaves exactly 10,000 rows and an empty outbox",
          arguments: TestEngine.available)
    func killedMidPush(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let schema = database.folder + "/ops.yaml"
            try ExampleSchemas.text("ops.yaml").write(toFile: schema, atomically: true, encoding: .utf8)
            let port = try freePort()
            var serve = ["serve", "--port", "\(port)", "--data-dir", database.folder, "--schema", schema]
            if case .postgres(let url) = database.location {
                serve += ["--database", "postgres://\(url.username)@\(url.host):\(url.port)/\(url.database)?sslmode=disable"]
            }
            let environment: [String: String] = [:]
            var server = try await Self.start(serve, environment: environment)
            let home = database.folder + "/home"
            let anonKey = try String(contentsOfFile: database.folder + "/keys/anon-key", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let cli = ["FERRY_SERVER": "http://127.0.0.1:\(port)", "FERRY_API_KEY": anonKey, "FERRY_HOME": home]
            let email = "crash-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let signup = try await FerryProcess.run(["signup", email, "--json"], environment: cli.merging(["FERRY_PASSWORD": "correct horse 1"]) { $1 })
            try #require(signup.status == 0, "\(signup.stderr)")
            let account = try JSONSerialization.jsonObject(with: Data(signup.stdout.utf8)) as? [String: Any]
            let userID = account?["user_id"] as? String
            let space = try #require(UUID(uuidString: userID ?? ""))

            // 10,000 offline writes, straight into the profile's store (as 10,000 `ferry put`s would, faster).
            let profile = URL(filePath: home).appending(path: "profiles/default")
            let cachedSchema = try JSONDecoder().decode(Schema.self, from: Data(contentsOf: profile.appending(path: "schema.json")))
            do {
                let store = try LocalStore(fileURL: profile.appending(path: "store.sqlite"), schema: cachedSchema)
                for index in 0..<Self.recordCount {
                    _ = try store.put(collection: "clients", space: space, fields: ["name": .string("client \(index)")])
                }
                #expect(try store.pendingCount() == Self.recordCount)
            }

            // Push, and kill the server once part of the push has committed.
            let sync = try FerryProcess(["sync", "--json"], environment: cli)
            let deadline = ContinuousClock.now + .seconds(120)
            var committed: Int64 = 0
            while committed == 0, ContinuousClock.now < deadline {
                committed = (try? await database.integer("SELECT count(*) FROM clients")) ?? 0
                if committed == 0 { try await Task.sleep(for: .milliseconds(20)) }
            }
            server.signal(SIGKILL)
            _ = await server.waitForExit()
            let interrupted = await sync.waitForExit(timeout: .seconds(120))
            try #require(committed > 0, "the push never committed anything")
            #expect(interrupted.status != 0, "the kill landed after the push finished; nothing was tested")
            let before = try await database.integer("SELECT count(*) FROM clients")
            #expect(before < Int64(Self.recordCount))

            server = try await Self.start(serve, environment: environment)
            let resumed = try await FerryProcess(["sync", "--json"], environment: cli).waitForExit(timeout: .seconds(300))
            #expect(resumed.status == 0, "\(resumed.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(report["pending"] as? Int == 0, "the outbox is empty")
            #expect(try await database.integer("SELECT count(*) FROM clients") == Int64(Self.recordCount))
            #expect(try await database.integer("SELECT count(DISTINCT name) FROM clients") == Int64(Self.recordCount), "none twice")
            server.signal(SIGTERM)
            _ = await server.waitForExit()
        }
    }

    static func start(_ arguments: [String], environment: [String: String]) async throws -> FerryProcess {
        let process = try FerryProcess(arguments, environment: environment)
        let banner = await process.waitForLine(startingWith: "Ferry listening on")
        try #require(banner != nil, "the server did not start")
        return process
    }
}

/// A loopback port that was free a moment ago (the server is restarted on the same one).
func freePort() throws -> Int {
    let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
    }
    try #require(bound)
    return Int(UInt16(bigEndian: address.sin_port))
}
