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
        } catch {
            throw error.serviceError(limits: hub.limits)
        }
        guard context.streamUpgrade.isUpgrading else {
            throw APIError(.upgradeRequired, .upgradeRequired, "GET /sync/v1/stream is a WebSocket: send it as a connection's first request, with 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13' and a 'Sec-WebSocket-Key'.", headers: [.upgrade: "websocket"])
        }
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
