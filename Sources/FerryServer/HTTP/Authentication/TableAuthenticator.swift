import FerryCore
import FerrySecurity
import Hummingbird
import NIOCore

/// Who calls `/rest/v1`: the one place its credentials are read, as ``Authenticator`` is for the other groups.
///
/// `apikey` is the anon key or the service-role key. `Authorization: Bearer` carries a user's access token (verified as
/// every route verifies it, a revoked device included), or the service-role key (every space), or the anon key alone,
/// which reaches no table: 401 `42501`, as PostgREST answers a role without grants.
struct TableAuthenticator: RouterMiddleware {
    typealias Context = FerryRequestContext

    let auth: AuthService
    let devices: DeviceService
    let keys: ServerKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try APIKeyMiddleware<Context>.check(request.headers[.apiKey], keys: keys)
        var context = context
        let authorization = request.headers[.authorization]
        let bearer = request.bearerToken
        let role = bearer.flatMap(keys.role(ofKey:))
        if role == .serviceRole {
            context.tableCaller = .serviceRole
        } else if bearer == nil || role == .anon {
            throw TableError(
                .unauthenticated, "42501", "permission denied: the anon key alone reads no table",
                hint: "Sign in and send the access token as Authorization: Bearer, or use the service_role key from a backend."
            )
        } else {
            let caller = try await RequestDeadline.bound { [auth, devices] in
                try await devices.caller(authorization: authorization, auth: auth, withSpaces: false)
            }
            context.tableCaller = .user(caller.userID)
        }
        return try await next(request, context)
    }
}

/// The context of a `/rest/v1` route: the parent's, plus the caller ``TableAuthenticator`` found.
struct TableContext: ChildRequestContext, FerryChanneledContext {
    typealias ParentContext = FerryRequestContext
    var coreContext: CoreRequestContextStorage
    let caller: TableCaller
    let channel: any Channel

    init(context: FerryRequestContext) throws {
        guard let caller = context.tableCaller else {
            throw TableError(.unauthenticated, "42501", "This endpoint requires credentials")
        }
        self.coreContext = context.coreContext
        self.caller = caller
        self.channel = context.channel
    }
}
