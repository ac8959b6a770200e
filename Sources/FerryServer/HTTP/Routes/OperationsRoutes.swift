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
        router.group("/metrics").add(middleware: MetricsAccess(token: metricsToken)).get { _, _ in
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
