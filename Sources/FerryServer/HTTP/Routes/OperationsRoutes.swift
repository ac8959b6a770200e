import FerryCore
import FerrySecurity
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus

/// `/health`, `/metrics` and `/openapi.yaml`: the routes operators and load balancers use.
struct OperationsRoutes {
    let storage: any DatabaseStorage
    let registry: PrometheusCollectorRegistry
    let healthTimeout: Duration
    /// The bearer token `/metrics` requires; without one, metrics go only to loopback peers no proxy forwarded.
    let metricsToken: String?

    struct HealthReport: Encodable, Sendable {
        var status: String
        var database: String
    }

    func register(on router: Router<FerryRequestContext>) {
        router.get("/health") { _, _ in JSONResponse(try await self.health()) }
        router.head("/health") { _, _ -> HTTPResponse.Status in
            _ = try await self.health()
            return .ok
        }
        router.get("/metrics") { request, context in
            try self.authorizeMetrics(request, context)
            var buffer: [UInt8] = []
            buffer.reserveCapacity(4096)
            self.registry.emit(into: &buffer)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer))
            )
        }
        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml))
            )
        }
    }

    /// Request counts and routes tell an outsider how the server is used, so `/metrics` needs the configured token,
    /// or, without one, a loopback peer that no proxy forwarded (a reverse proxy on the same host is loopback too).
    func authorizeMetrics(_ request: Request, _ context: FerryRequestContext) throws {
        if let metricsToken {
            let presented = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            guard let presented, ConstantTime.isEqual(presented, metricsToken) else {
                throw APIError(.unauthorized, .invalidMetricsToken, "GET /metrics needs 'Authorization: Bearer' with the server's metrics token.")
            }
            return
        }
        let isForwarded = [.forwarded, .xForwardedFor, .xRealIP].contains { request.headers[$0] != nil }
        guard context.peerAddress?.isLoopback == true, !isForwarded else {
            throw APIError(.forbidden, .metricsForbidden, "Metrics are served only on loopback unless the server has a metrics token (--metrics-token).")
        }
    }

    /// 200 when the database answers a query within the timeout, 503 otherwise.
    func health() async throws -> HealthReport {
        let storage = self.storage
        do {
            try await withTimeout(healthTimeout) { try await storage.ping() }
        } catch {
            throw APIError(
                .serviceUnavailable, .unavailable, "The database is not answering; retry shortly.",
                headers: [.retryAfter: "5"]
            )
        }
        return HealthReport(status: "ok", database: storage.dialect.rawValue)
    }
}

extension ErrorCode {
    /// `GET /metrics` without the right bearer token, on a server that has one.
    public static let invalidMetricsToken: ErrorCode = "invalid_metrics_token"
    /// `GET /metrics` from a non-loopback or proxied client, on a server without a metrics token.
    public static let metricsForbidden: ErrorCode = "metrics_forbidden"
}

extension HTTPField.Name {
    /// `X-Real-IP`, which nginx setups often add.
    static let xRealIP = Self("X-Real-IP")!
}
