import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request to the server, described once. ``AuthClient/send(_:)`` adds what every request carries (the anon
/// key, the session's bearer token when ``isAuthorized``, JSON headers) and turns the answer into its 2xx body or
/// the one error the failure stands for (``RemoteError``, or ``AuthError`` when the session is over).
public struct ServerRequest: Sendable {
    /// `GET`, `POST`, `PATCH`…
    public var method: String
    /// The path under the endpoint's base URL, e.g. `sync/v1/spaces`.
    public var path: String
    /// Query items to append.
    public var query: [URLQueryItem]
    /// Headers of this request alone (say, `Range`); the pipeline adds `apikey`, `Authorization` and `Accept`.
    public var headers: [String: String]
    /// The body; `Content-Type: application/json` unless ``headers`` name another.
    public var body: Data?
    /// Whether the session's bearer token goes with it; a `401 bad_jwt` is then retried once after a refresh.
    public var isAuthorized: Bool

    /// Creates a request.
    public init(
        _ method: String, _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:], body: Data? = nil,
        isAuthorized: Bool = true
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.isAuthorized = isAuthorized
    }

    /// A request whose body is `value` as JSON (omitted when `nil`).
    public static func json(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body value: (any Encodable)? = nil, isAuthorized: Bool = true
    ) throws -> ServerRequest {
        ServerRequest(method, path, query: query, body: try value.map { Data(try JSONValueEncoder().encodeText($0)) }, isAuthorized: isAuthorized)
    }

    /// A request carrying a sync message, written by its one writer.
    static func message(_ method: String, _ path: String, _ message: some JSONTextWritable) -> ServerRequest {
        ServerRequest(method, path, body: Data(JSONValueEncoder().encodeText(message)))
    }

    /// The `URLRequest` for `endpoint`, without the session's token.
    func urlRequest(for endpoint: ServerEndpoint) -> URLRequest {
        var request = URLRequest(url: endpoint.url(path: path, query: query))
        request.httpMethod = method
        request.setValue(endpoint.apiKey, forHTTPHeaderField: "apikey")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        return request
    }
}
