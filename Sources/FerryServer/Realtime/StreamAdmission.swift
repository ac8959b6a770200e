import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Admits an authenticated stream request (behind the ``Authenticator``): room for one more stream, and a WebSocket
/// upgrade. Runs before the upgrade, so a refused client gets an ordinary JSON error.
struct StreamAdmission: RouterMiddleware {
    typealias Context = FerryRequestContext
    let hub: RealtimeHub

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let caller = context.caller else {
            throw APIError(.unauthorized, .noAuthorization, "This endpoint requires a valid Bearer token")
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
        } catch .closing {
            throw APIError(.serviceUnavailable, .unavailable, "The server is shutting down; reconnect in a moment.", headers: [.retryAfter: "1"])
        }
        guard request.isWebSocketUpgrade else {
            throw APIError(.upgradeRequired, .upgradeRequired, "GET /sync/v1/stream is a WebSocket: send 'Connection: Upgrade' and 'Upgrade: websocket'.", headers: [.upgrade: "websocket"])
        }
        // An upgrade that never starts (the client gone before the 101) lets go of its handler when its connection closes.
        context.releaseWebSocketWhenClosed()
        return try await next(request, context)
    }
}

extension StreamAdmission {
    /// Goes in front of the ``Authenticator``: bounds the stream requests being admitted at once
    /// (``RealtimeLimits/maximumOpeningStreams``), refusing one more before its token is read, and notes the account
    /// changes the hub has heard, so a change heard while the session and spaces are read leaves the stream not current.
    struct Mark: RouterMiddleware {
        typealias Context = FerryRequestContext
        let hub: RealtimeHub

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            guard hub.beginOpening() else {
                throw APIError(
                    .serviceUnavailable, .tooManyStreams, "The server is admitting many streams at once; retry in a moment.",
                    headers: [.retryAfter: "1"]
                )
            }
            defer { hub.endOpening() }
            var context = context
            context.accountChangesAtStart = hub.accountChangesHeard.load(ordering: .sequentiallyConsistent)
            return try await next(request, context)
        }
    }
}

extension Request {
    /// Whether the request asks for a WebSocket upgrade, spelled as the server's upgrade path reads it: one `Upgrade`
    /// value, `websocket`. (A request spelled otherwise would reach the route as a plain request: it would answer 200
    /// with no stream, holding its context until the connection closed.)
    var isWebSocketUpgrade: Bool {
        headers[.upgrade] == "websocket"
    }
}
