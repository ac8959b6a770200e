import FerryCore
import FerrySecurity
import HTTPTypes
import Hummingbird

/// The admin endpoints' gate (`/auth/v1/admin`): the bearer token must be the service-role key, as GoTrue's admin API
/// wants its `service_role` JWT: none is `401 no_authorization`; any other, a user's valid token included, `403 not_admin`.
/// Both keys compare in constant time.
struct ServiceRoleMiddleware<Context: RequestContext>: RouterMiddleware {
    let keys: ServerKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try APIKeyMiddleware<Context>.check(request.headers[.apiKey], keys: keys)
        guard let bearer = request.bearerToken else {
            throw APIError(.unauthorized, .noAuthorization, "The admin endpoints need the service_role key as the bearer token (Authorization: Bearer).")
        }
        guard keys.role(ofKey: bearer) == .serviceRole else {
            throw APIError(.forbidden, .notAdmin, "User not allowed: the admin endpoints take the service_role key as the bearer token, from a server only.")
        }
        return try await next(request, context)
    }

}

extension Request {
    /// The token of `Authorization: Bearer <token>` (the scheme in any case), if the request has one.
    var bearerToken: String? {
        guard let header = headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}
