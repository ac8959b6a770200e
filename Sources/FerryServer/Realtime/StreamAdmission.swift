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
    /// Notes the account changes the hub has heard before the stream request is authenticated (it goes in front of the
    /// ``Authenticator``), so a change heard while its session and spaces are read leaves the stream not current.
    struct Mark: RouterMiddleware {
        typealias Context = FerryRequestContext
        let hub: RealtimeHub

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
