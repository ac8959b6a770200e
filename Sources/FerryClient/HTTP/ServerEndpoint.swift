import Foundation

/// Where a Ferry (or Supabase) server lives and the public anon key its `/auth/v1` routes ask for.
public struct ServerEndpoint: Sendable, Hashable {
    /// The server's base URL, e.g. `https://sync.example.com`; a path prefix is kept.
    public var baseURL: URL
    /// The project's anon key, sent as the `apikey` header. Public by design, but not logged.
    public var apiKey: String

    /// Creates an endpoint for the server at `baseURL` with the anon key `apiKey`.
    public init(baseURL: URL, apiKey: String) {
        self.baseURL = baseURL
        self.apiKey = apiKey
    }

    /// The URL of `path` (e.g. `auth/v1/token`) under the base URL, with `query` appended.
    public func url(path: String, query: [URLQueryItem] = []) -> URL {
        let url = baseURL.appending(path: path)
        return query.isEmpty ? url : url.appending(queryItems: query)
    }
}
