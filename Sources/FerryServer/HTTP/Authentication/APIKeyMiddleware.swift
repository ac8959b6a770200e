import FerryCore
import FerrySecurity
import HTTPTypes
import Hummingbird

/// Refuses requests without one of the server's API keys in `apikey` (the anon key, or a backend's service-role key),
/// as Supabase's gateway does. Keys are compared in constant time. The key grants nothing by itself: who the caller is
/// comes from the bearer token.
struct APIKeyMiddleware<Context: RequestContext>: RouterMiddleware {
    let keys: ServerKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try Self.check(request.headers[.apiKey], keys: keys)
        return try await next(request, context)
    }

    /// Refuses a missing or wrong key (401 `invalid_api_key`).
    static func check(_ presented: String?, keys: ServerKeys) throws {
        guard let presented else {
            throw APIError(.unauthorized, .invalidAPIKey, "No API key found in request: send the server's anon key in the apikey header.")
        }
        guard keys.role(ofKey: presented) != nil else {
            throw APIError(.unauthorized, .invalidAPIKey, "Invalid API key: use the anon key printed by 'ferry serve --print-keys'.")
        }
    }
}

extension HTTPField.Name {
    /// `apikey`, the header Supabase clients send.
    static let apiKey = Self("apikey")!
    /// `X-Client-Info`, the client library and version Supabase clients send.
    static let clientInfo = Self("X-Client-Info")!
}
