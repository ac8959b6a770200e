import FerryCore
import FerrySecurity
import HTTPTypes
import Hummingbird

/// Who may read `/metrics`: request counts and routes tell an outsider how the server is used, so it needs the
/// configured token (constant-time compared), or, without one, a loopback peer that no proxy forwarded (a reverse
/// proxy on the same host is loopback too).
struct MetricsAccess: RouterMiddleware {
    typealias Context = FerryRequestContext
    /// The bearer token `/metrics` requires; without one, metrics go only to loopback peers no proxy forwarded.
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let token {
            guard let presented = request.headers[.authorization].flatMap(AuthService.bearerToken), ConstantTime.isEqual(presented, token) else {
                throw APIError(.unauthorized, .invalidMetricsToken, "GET /metrics needs 'Authorization: Bearer' with the server's metrics token.")
            }
        } else {
            let isForwarded = [.forwarded, .xForwardedFor, .xRealIP].contains { request.headers[$0] != nil }
            guard context.peerAddress?.isLoopback == true, !isForwarded else {
                throw APIError(.forbidden, .metricsForbidden, "Metrics are served only on loopback unless the server has a metrics token (--metrics-token).")
            }
        }
        return try await next(request, context)
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
