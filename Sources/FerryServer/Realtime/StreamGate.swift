import FerryCore
import FerrySecurity
import Foundation
import HTTPTypes
import Hummingbird

/// Admits a stream request: the anon key and the access token, from the headers or, for browsers (which cannot set
/// headers on a WebSocket), from the `apikey` and `access_token` query parameters; the session's device (revoked →
/// 403); and room for one more stream. Runs before the upgrade, so a refused client gets an ordinary JSON error.
struct StreamGate: RouterMiddleware {
    typealias Context = FerryRequestContext
    let auth: AuthService
    let devices: DeviceService
    let hub: RealtimeHub
    let anonKey: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let query = request.uri.queryParameters
        try APIKeyMiddleware<Context>.check(request.headers[.apiKey] ?? query.get("apikey"), anonKey: anonKey)
        let authorization = request.headers[.authorization] ?? query.get("access_token").map { "Bearer \($0)" }
        var context = context
        let caller = try await withTimeout(RequestDeadline.duration) { [auth, devices] in
            try await devices.caller(authorization: authorization, auth: auth)
        }
        do {
            try hub.admits(userID: caller.userID)
        } catch .accountFull {
            throw APIError(
                .tooManyRequests, .tooManyStreams,
                "This account has \(hub.limits.maximumStreamsPerAccount) streams open already; close one (or wait for it to time out) first.",
                headers: [.retryAfter: "5"]
            )
        } catch .serverFull {
            throw APIError(.serviceUnavailable, .tooManyStreams, "The server holds as many streams as it can; retry shortly.", headers: [.retryAfter: "5"])
        }
        context.caller = caller
        guard request.isWebSocketUpgrade else {
            throw APIError(.upgradeRequired, .upgradeRequired, "GET /sync/v1/stream is a WebSocket: send 'Connection: Upgrade' and 'Upgrade: websocket'.", headers: [.upgrade: "websocket"])
        }
        return try await next(request, context)
    }
}

extension Request {
    /// Whether the request asks for a WebSocket upgrade.
    var isWebSocketUpgrade: Bool {
        headers[values: .upgrade].contains { $0.lowercased() == "websocket" }
    }
}
