import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing
import Yams

/// `/health`, `/metrics`, `/openapi.yaml` and unknown routes, on a live server over each engine.
@Suite("Operations routes")
struct OperationsRoutesTests {
    @Test("HEAD and GET /health answer 200 while the database answers", arguments: TestEngine.available)
    func healthy(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine) { server in
            let head = try await server.send("HEAD", "/health")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            let get = try await server.send("GET", "/health")
            #expect(get.status == 200)
            #expect(try get.json()["database"] as? String == engine.dialect.rawValue)
        }
    }

    @Test("/health answers 503 with a JSON error when PostgreSQL stops answering, and 200 once it is back")
    func unhealthyPostgres() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            var configuration = database.serverConfiguration
            // Short, so the outage below is answered in seconds: the pool retries a refused connection until the
            // timeout passes, so each 503 takes the whole of it. A loaded machine's slow first connection is waited
            // for below, by asking again rather than by long timeouts.
            configuration.healthTimeout = .seconds(3)
            configuration.requestDeadline = .seconds(4)
            let server = try await LiveServer.start(configuration)
            defer { Task { await server.stop() } }
            #expect(await Self.healthy(server, within: .seconds(60)))
            try await database.setRefusingConnections(true)
            let down = try await server.send("GET", "/health")
            #expect(down.status == 503)
            #expect(try down.json()["error_code"] as? String == "service_unavailable")
            #expect(down.header("Retry-After") == "5")
            #expect(try await server.send("HEAD", "/health").status == 503)
            let signIn = try await server.send("POST", "/auth/v1/token?grant_type=password",
                headers: ["apikey": server.server.keys.anonKey, "Content-Type": "application/json"],
                body: Data(#"{"email":"a@example.com","password":"correct horse 1"}"#.utf8)
            )
            #expect(signIn.status == 503, "a database outage is a 503 to retry, never a 500")
            #expect(try signIn.json()["error_code"] as? String == "service_unavailable")
            try await database.setRefusingConnections(false)
            // Back within a minute: the pool reconnects on demand, and a busy cluster can be slow to accept.
            #expect(await Self.healthy(server, within: .seconds(60)))
            await server.stop()
        }
    }

    /// Whether `/health` answers 200 within `time`, asking again every half second.
    private static func healthy(_ server: any ServerUnderTest, within time: Duration) async -> Bool {
        let deadline = ContinuousClock.now + time
        repeat {
            if (try? await server.send("GET", "/health").status) == 200 { return true }
            try? await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        return false
    }

    @Test("/health answers 503 when the SQLite database is closed")
    func unhealthySQLite() async throws {
        try await LiveServer.with(.sqlite) { server in
            try await server.server.storage.close()
            let down = try await server.send("GET", "/health")
            #expect(down.status == 503)
            #expect(try down.json()["error_code"] as? String == "service_unavailable")
        }
    }

    @Test("an unknown route is a 404 with a JSON error body and a request id")
    func unknownRoute() async throws {
        try await LiveServer.with(.sqlite) { server in
            let reply = try await server.send("GET", "/no/such/route?token=secret")
            #expect(reply.status == 404)
            #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
            let body = try reply.json()
            #expect(body["code"] as? Int == 404)
            #expect(body["error_code"] as? String == "not_found")
            #expect((body["msg"] as? String)?.contains("/no/such/route") == true)
            #expect((body["msg"] as? String)?.contains("secret") == false)
            #expect(reply.header("X-Request-Id")?.isEmpty == false)
        }
    }

    @Test("an unknown route under /storage/v1 or /rest/v1 answers in that API's error shape, which its client parses")
    func unknownRouteInClientShape() async throws {
        try await LiveServer.with(.sqlite) { server in
            let storage = try await server.send("POST", "/storage/v1/object/move", headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
            let storageBody = try storage.json()
            #expect(storage.status == 404 && storageBody["statusCode"] as? String == "404" && storageBody["error"] as? String == "not_found")
            #expect((storageBody["message"] as? String)?.contains("/storage/v1/object/move") == true)

            let function = try await server.send("POST", "/rest/v1/rpc/archive_sermons", headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
            let functionBody = try function.json()
            #expect(function.status == 404 && functionBody["code"] as? String == "PGRST202")
            #expect((functionBody["message"] as? String)?.contains("archive_sermons") == true && functionBody.keys.contains("hint"))

            let nested = try await server.send("GET", "/rest/v1/sermons/extra")
            let nestedBody = try nested.json()
            #expect(nested.status == 404 && nestedBody["code"] as? String == "PGRST125")
        }
    }

    @Test("a body declared past the limit is 413 at once, without waiting for it; a malformed chunked body is 400, not 413")
    func bodyFraming() async throws {
        try await LiveServer.with(.sqlite, configure: { $0.useFastPasswordHashing() }) { server in
            let key = server.server.keys.anonKey
            let declared = try RawConnection(port: server.port)
            defer { declared.close() }
            let started = ContinuousClock.now
            declared.send("POST /auth/v1/signup HTTP/1.1\r\nHost: 127.0.0.1\r\napikey: \(key)\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n")
            let early = await declared.receive(within: .seconds(10))
            #expect(early.hasPrefix("HTTP/1.1 413") && early.contains("payload_too_large"), "\(early.prefix(300))")
            #expect(ContinuousClock.now - started < .seconds(5), "answered before the deadline, not after it")

            let chunked = try RawConnection(port: server.port)
            defer { chunked.close() }
            chunked.send("POST /auth/v1/signup HTTP/1.1\r\nHost: 127.0.0.1\r\napikey: \(key)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n")
            let malformed = await chunked.receive(within: .seconds(10))
            #expect(malformed.hasPrefix("HTTP/1.1 400"), "\(malformed.prefix(300))")
        }
    }

    @Test("a caller's X-Request-Id is echoed; a malformed one is replaced")
    func requestIDs() async throws {
        try await LiveServer.with(.sqlite) { server in
            let kept = try await server.send("GET", "/health", headers: ["X-Request-Id": "launch-42"])
            #expect(kept.header("X-Request-Id") == "launch-42")
            for malformed in ["forged id\\n", String(repeating: "x", count: 65)] {
                let replaced = try await server.send("GET", "/health", headers: ["X-Request-Id": malformed])
                #expect(replaced.header("X-Request-Id") != malformed)
                #expect(replaced.header("X-Request-Id")?.isEmpty == false)
            }
        }
    }

    @Test("/metrics counts requests by method, route and status")
    func metrics() async throws {
        try await LiveServer.with(.sqlite) { server in
            for _ in 0..<3 { _ = try await server.send("GET", "/health") }
            _ = try await server.send("GET", "/missing-\(UUID())")
            let reply = try await server.send("GET", "/metrics")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true)
            #expect(reply.text.contains(#"ferry_http_requests_total{method="GET",route="/health",status="200"} 3"#))
            #expect(reply.text.contains(#"ferry_http_requests_total{method="GET",route="NotFound",status="404"} 1"#))
            #expect(reply.text.contains("ferry_http_request_duration_seconds_bucket"))
            #expect(!reply.text.contains("missing-"), "unknown paths do not become labels")
        }
    }

    @Test("/openapi.yaml serves docs/openapi.yaml, an OpenAPI 3.1 document naming every route")
    func openAPI() async throws {
        try await LiveServer.with(.sqlite) { server in
            let reply = try await server.send("GET", "/openapi.yaml")
            #expect(reply.status == 200)
            let docs = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appending(path: "docs/openapi.yaml")
            let expected = try String(contentsOf: docs, encoding: .utf8)
            #expect(reply.text == expected)
            let document = try #require(try Yams.load(yaml: reply.text) as? [String: Any])
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: Any])
            #expect(Set(paths.keys).isSuperset(of: [
                "/health", "/metrics", "/openapi.yaml", "/auth/v1/signup", "/auth/v1/token", "/auth/v1/user", "/auth/v1/logout",
                "/sync/v1/profile", "/oauth/v1/github/token",
            ]))
        }
    }
}
