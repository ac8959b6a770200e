import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The production shape of docs/operations.md, run for real: Debian's nginx terminating TLS in front of two
/// `ferry serve` processes on one PostgreSQL, passing WebSocket upgrades, the instances trusting its forwarding header.
@Suite("Behind a load balancer")
struct LoadBalancerTests {
    static let secret = "a load-balanced secret of at least thirty-two characters"

    @Test("an app syncs and hears realtime through nginx; one instance killed mid-run, its devices move to the other and nothing is lost")
    func twoInstancesBehindNginx() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        guard let nginx = Nginx.executable else {
            // CI installs nginx (scripts/test.sh); a machine without it says so instead of passing silently.
            if ProcessInfo.processInfo.environment[TestEngine.requirePostgresVariable] == "1" { Issue.record("nginx is not installed") }
            return
        }
        try await TestDatabase.with(.postgres) { database in
            let schema = database.folder + "/tabletnotes.yaml"
            try ExampleSchemas.text("tabletnotes.yaml").write(toFile: schema, atomically: true, encoding: .utf8)
            let first = try await Instance.start(database, name: "first", schema: schema)
            let second = try await Instance.start(database, name: "second", schema: schema)
            defer {
                first.process.killIfRunning()
                second.process.killIfRunning()
            }
            let proxy = try await Nginx.start(nginx, folder: database.folder + "/nginx", upstreams: [first.port, second.port])
            defer { proxy.stop() }
            // The key the first instance printed works through either instance: they share the secret.
            let app = App(baseURL: URL(string: "https://localhost:\(proxy.port)")!, anonKey: first.anonKey, caFile: proxy.caFile)

            let email = uniqueEmail("balanced")
            let phone = try await app.device(email: email, signUp: true, realtime: true)
            let pad = try await app.device(email: email, signUp: false, realtime: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                defer { group.cancelAll() }
                try await eventually("the phone's stream never opened through nginx") { phone.engine.status.realtime == .connected }
                let before = try pad.store.save(collection: "sermons", fields: ["title": "Before", "date": "2026-11-29T10:00:00Z"])
                try await pad.syncUntilDone()
                try await eventually("the poke never reached the phone through nginx") { try phone.store.fetch(collection: "sermons", id: before.id) != nil }

                // The instance holding the phone's stream dies mid-run: nginx sends everything to the other, and the
                // phone's stream reconnects there.
                let instances = [first, second]
                let holding = try await instances.asyncFirstIndex { try await $0.openStreams() > 0 }
                let (killed, survivor) = (instances[holding ?? 0], instances[1 - (holding ?? 0)])
                #expect(holding != nil, "neither instance counts the phone's stream")
                killed.process.signal(SIGKILL)
                var written = [before.id]
                for index in 0..<10 {
                    written.append(try pad.store.save(collection: "sermons", fields: ["title": .string("After \(index)"), "date": "2026-11-29T10:00:00Z"]).id)
                    try await pad.syncUntilDone()
                }
                try await eventually("the phone did not receive every write after the instance died") {
                    try written.allSatisfy { try phone.store.fetch(collection: "sermons", id: $0) != nil }
                }
                #expect(try pad.store.pendingCount() == 0)
                try await eventually("the phone's stream did not move to the surviving instance") { try await survivor.openStreams() == 1 }

                // The CLI through the same proxy: it trusts the private CA only when told to (--ca-file / FERRY_CA_FILE).
                let home = database.folder + "/cli-home"
                var environment = ["FERRY_SERVER": app.baseURL.absoluteString, "FERRY_API_KEY": app.anonKey, "FERRY_HOME": home, "FERRY_PASSWORD": "correct horse 1"]
                let untrusted = try await FerryProcess.run(["login", email], environment: environment)
                #expect(untrusted.status != 0, "a certificate no trusted CA signed is refused")
                environment["FERRY_CA_FILE"] = proxy.caFile
                let trusted = try await FerryProcess.run(["login", email], environment: environment)
                #expect(trusted.status == 0, "ferry login through nginx with the CA: \(trusted.stderr)")
                #expect(try phone.store.fetchAll(collection: "sermons").count == 11, "each write once")
            }
        }
    }

    /// One `ferry serve` on the shared database, with the shared secret, trusting nginx's forwarding header.
    struct Instance {
        let process: FerryProcess
        let port: Int
        let anonKey: String

        static func start(_ database: TestDatabase, name: String, schema: String) async throws -> Instance {
            guard case .postgres(let url) = database.location else { throw CrashHarnessError(description: "PostgreSQL only") }
            let port = try freePort(), folder = database.folder + "/" + name
            let process = try await CrashHarness.launch([
                "serve", "--port", "\(port)", "--data-dir", folder, "--schema", schema, "--jwt-secret", secret, "--trusted-proxy", "127.0.0.1",
                "--database", "postgres://\(url.username)@\(url.host):\(url.port)/\(url.database)?sslmode=disable",
            ])
            let anonKey = try String(contentsOfFile: folder + "/keys/anon-key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            return Instance(process: process, port: port, anonKey: anonKey)
        }

        /// `ferry_realtime_streams` from the instance's own `/metrics` (served to loopback callers that no proxy forwarded).
        func openStreams() async throws -> Int {
            let (data, _) = try await HTTPClientTransport().send(URLRequest(url: URL(string: "http://127.0.0.1:\(port)/metrics")!))
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("ferry_realtime_streams ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
        }
    }

    /// The app's side: devices that reach the server through the proxy, trusting its private CA.
    struct App {
        let baseURL: URL
        let anonKey: String
        let caFile: String

        struct Device {
            let store: LocalStore
            let engine: SyncEngine

            /// One sync that ends well, tried again while the dead instance still gets connections for a moment.
            func syncUntilDone() async throws {
                for _ in 0..<20 {
                    if case .completed = await engine.backgroundSync(timeLimit: .seconds(30)) { return }
                    try await Task.sleep(for: .milliseconds(250))
                }
                Issue.record("no sync completed through the proxy")
            }
        }

        func device(email: String, signUp: Bool, realtime: Bool) async throws -> Device {
            let transport = HTTPClientTransport(timeout: .seconds(20), trustRootsFile: caFile)
            let auth = AuthClient(endpoint: ServerEndpoint(baseURL: baseURL, apiKey: anonKey), store: InMemorySessionStore(), transport: transport)
            let session = signUp
                ? try await auth.signUp(email: email, password: "correct horse 1") : try await auth.signIn(email: email, password: "correct horse 1")
            let client = SyncClient(auth: auth)
            let store = try LocalStore.inMemory(schema: try await client.schema(), defaultSpace: session.user.id)
            let keys = DeviceKeyPair.generate()
            _ = try await client.registerDevice(
                store.deviceId, DeviceRegistration(name: "Balanced", type: .linux, hostname: "lb.local", publicKey: keys.publicKeyBase64), keys: keys
            )
            var configuration = SyncEngine.Configuration()
            configuration.periodicInterval = nil
            configuration.localChangeDebounce = .seconds(3600)
            configuration.realtime = realtime
            configuration.realtimeBackoff = BackoffPolicy(initial: .milliseconds(100), maximum: .seconds(1))
            return Device(store: store, engine: SyncEngine(store: store, remote: client, configuration: configuration))
        }
    }
}

extension Array {
    func asyncFirstIndex(where matches: (Element) async throws -> Bool) async throws -> Int? {
        for (index, element) in enumerated() where try await matches(element) { return index }
        return nil
    }
}

/// Debian's nginx as a TLS-terminating load balancer on a free port, configured as docs/operations.md shows.
struct Nginx {
    let process: ChildProcess
    let port: Int
    let caFile: String

    static var executable: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func start(_ executable: String, folder: String, upstreams: [Int]) async throws -> Nginx {
        let certificates = try LoopbackCertificates.write(into: folder + "/tls")
        let port = try freePort()
        let configuration = """
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 1024; }
            http {
              access_log off;
              client_body_temp_path \(folder)/body;
              proxy_temp_path \(folder)/proxy;
              fastcgi_temp_path \(folder)/fastcgi;
              uwsgi_temp_path \(folder)/uwsgi;
              scgi_temp_path \(folder)/scgi;
              upstream ferry {
                \(upstreams.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=30s;" }.joined(separator: "\n    "))
              }
              map $http_upgrade $connection_upgrade { default upgrade; '' close; }
              server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(certificates.certificateFile);
                ssl_certificate_key \(certificates.keyFile);
                client_max_body_size 64m;
                location / {
                  proxy_pass http://ferry;
                  proxy_http_version 1.1;
                  proxy_set_header Host $host;
                  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                  proxy_set_header X-Forwarded-Proto https;
                  proxy_set_header Upgrade $http_upgrade;
                  proxy_set_header Connection $connection_upgrade;
                  proxy_read_timeout 1h;
                  proxy_request_buffering off;
                  proxy_next_upstream error timeout;
                }
              }
            }
            """
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable, arguments: ["-p", folder, "-c", folder + "/nginx.conf", "-g", "daemon off; master_process on;"],
            environment: ["PATH": "/usr/sbin:/usr/bin:/bin"], standardOutput: .null, standardError: .null
        )
        let transport = HTTPClientTransport(timeout: .seconds(2), trustRootsFile: certificates.caFile)
        try await eventually("nginx did not start: \((try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? "")", timeout: .seconds(20)) {
            let request = URLRequest(url: URL(string: "https://localhost:\(port)/health")!)
            return (try? await transport.send(request).1.statusCode) == 200
        }
        return Nginx(process: process, port: port, caFile: certificates.caFile)
    }

    func stop() {
        process.signal(SIGTERM)
        _ = process.waitUntilExit()
    }
}
