import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/metrics` is not public: a bearer token when one is configured, else loopback peers no proxy forwarded.
@Suite("Metrics access")
struct MetricsAccessTests {
    @Test("with a metrics token, only the right bearer gets metrics; /health stays open")
    func token() async throws {
        let token = "metrics-token-\(UUID().uuidString)"
        try await LiveServer.with(.sqlite, configure: { $0.metricsToken = token }) { server in
            let missing = try await server.send("GET", "/metrics")
            #expect(missing.status == 401)
            #expect(missing.errorCode == "invalid_metrics_token")
            let wrong = try await server.send("GET", "/metrics", headers: ["Authorization": "Bearer \(token)x"])
            #expect(wrong.status == 401)
            let right = try await server.send("GET", "/metrics", headers: ["Authorization": "Bearer \(token)"])
            #expect(right.status == 200)
            #expect(right.text.contains("ferry_http_requests_total"))
            #expect(try await server.send("GET", "/health").status == 200)
        }
    }

    @Test("without a token, a loopback peer gets metrics unless a proxy forwarded the request", arguments: ["X-Forwarded-For", "Forwarded", "X-Real-IP"])
    func loopbackOnly(_ header: String) async throws {
        try await LiveServer.with(.sqlite) { server in
            #expect(try await server.send("GET", "/metrics").status == 200)
            let proxied = try await server.send("GET", "/metrics", headers: [header: header == "Forwarded" ? "for=198.51.100.1" : "198.51.100.1"])
            #expect(proxied.status == 403)
            #expect(proxied.errorCode == "metrics_forbidden")
        }
    }
}
