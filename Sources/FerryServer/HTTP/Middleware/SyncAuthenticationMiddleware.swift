import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Authenticates every request of an authenticated route group, before its handler runs: the bearer token and its
/// session are verified within the request deadline, and a bound device is checked (revoked → 403) and marked as
/// seen. The caller goes into the context, where ``AuthenticatedContext`` requires it, so a route added to such a
/// group cannot forget to authenticate.
struct SyncAuthenticationMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let auth: AuthService
    let devices: DeviceService
    /// Whether the caller's spaces are read with its session (``SyncCaller/spaces``): for the pull, which needs them,
    /// and no other route, which would read them for nothing.
    var readsSpaces = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let authorization = request.headers[.authorization]
        var context = context
        context.caller = try await withTimeout(RequestDeadline.duration) { [auth, devices] in
            try await devices.caller(authorization: authorization, auth: auth, withSpaces: readsSpaces)
        }
        return try await next(request, context)
    }
}

/// The context of an authenticated route: the parent's, plus the verified caller.
struct AuthenticatedContext: ChildRequestContext, FerryChanneledContext {
    typealias ParentContext = FerryRequestContext
    var coreContext: CoreRequestContextStorage
    /// The verified caller: account, session and bound device.
    let caller: SyncCaller
    /// The connection (``FerryRequestContext/channel``).
    let channel: any Channel

    init(context: FerryRequestContext) throws {
        guard let caller = context.caller else {
            // Only reachable when a group forgets ``SyncAuthenticationMiddleware``: refuse rather than serve anonymously.
            throw APIError(.unauthorized, .noAuthorization, "This endpoint requires a valid Bearer token")
        }
        self.coreContext = context.coreContext
        self.caller = caller
        self.channel = context.channel
    }

    /// Runs database work within the request deadline (``RequestDeadline``); past it the request fails with 503.
    func withinDeadline<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withTimeout(RequestDeadline.duration, work)
    }
}
