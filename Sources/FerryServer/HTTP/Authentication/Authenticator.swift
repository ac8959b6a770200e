import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The one place a request's credentials are read: every authenticated route group, `/auth/v1/user`, `/sync/v1`,
/// `/storage/v1` and the realtime stream alike, has this middleware, and no handler reads a token or key itself.
///
/// It checks the anon key (constant time), verifies the bearer token and its session within the request deadline,
/// checks the session's device (revoked → 403) and marks it seen. The caller goes into the context, where
/// ``AuthenticatedContext`` requires it, so a route added to such a group cannot run without one.
struct Authenticator: RouterMiddleware {
    typealias Context = FerryRequestContext

    /// Where credentials may come from.
    enum Credentials {
        /// `apikey` and `Authorization: Bearer` headers.
        case headers
        /// Those, or the `apikey` and `access_token` query parameters: browsers cannot set headers on a WebSocket.
        case headersOrQuery
    }

    let auth: AuthService
    let devices: DeviceService
    let keys: ServerKeys
    var credentials = Credentials.headers
    /// Whether a caller is required, or only noted when presented.
    enum Requirement: Sendable {
        /// A verified caller, with its device (revoked → 403), or the request is refused (401/403).
        case required
        /// For the requests `when` selects (password sign-ins), the token and session they present, if those verify;
        /// never a refusal, and no device work: sign-in spares a device holding a session of the account from the
        /// lockout that others' guesses cause.
        case presented(when: @Sendable (Request) -> Bool)
    }

    var requirement = Requirement.required
    /// Whether the caller's spaces are read with its session (``SyncCaller/spaces``): for the pull, which needs them,
    /// and no other route, which would read them for nothing.
    var readsSpaces = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let query = credentials == .headersOrQuery ? request.uri.queryParameters : nil
        try APIKeyMiddleware<Context>.check(request.headers[.apiKey] ?? query?.get("apikey"), keys: keys)
        let authorization = request.headers[.authorization] ?? query?.get("access_token").map { "Bearer \($0)" }
        var context = context
        switch requirement {
        case .required:
            // A pull whose caller memory holds needs no database step, so no deadline race (a task of its own); on
            // PostgreSQL it waits for a fence, bounded by a timer. Whatever that wait took comes off the deadline.
            let deadline = ContinuousClock.now + RequestDeadline.duration
            if readsSpaces, let caller = await devices.callerFromMemory(authorization: authorization, auth: auth, until: deadline) {
                context.caller = caller
                break
            }
            context.caller = try await RequestDeadline.bound(until: deadline) { [auth, devices, readsSpaces] in
                try await devices.caller(authorization: authorization, auth: auth, withSpaces: readsSpaces)
            }
        case .presented(let when):
            if authorization != nil, when(request),
               let account = try? await RequestDeadline.bound({ [auth] in try await auth.authenticate(authorization: authorization) }) {
                context.caller = SyncCaller(account: account)
            }
        }
        return try await next(request, context)
    }
}
