import FerryCore
import FerrySecurity
import HTTPTypes
import Hummingbird

/// Refuses requests without the server's anon key in `apikey`, as Supabase's gateway does.
/// The key is compared in constant time.
struct APIKeyMiddleware<Context: RequestContext>: RouterMiddleware {
    let anonKey: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try Self.check(request.headers[.apiKey], anonKey: anonKey)
        return try await next(request, context)
    }

    /// Refuses a missing or wrong key (401 `invalid_api_key`).
    static func check(_ presented: String?, anonKey: String) throws {
        guard let presented else {
            throw APIError(.unauthorized, .invalidAPIKey, "No API key found in request: send the server's anon key in the apikey header.")
        }
        guard ConstantTime.isEqual(presented, anonKey) else {
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
