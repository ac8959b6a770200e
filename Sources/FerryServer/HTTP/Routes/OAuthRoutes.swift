import FerryCore
import FerrySecurity
import Foundation
import HTTPTypes
import Hummingbird
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `POST /oauth/v1/github/token`: exchanges a GitHub authorization code (with the client's PKCE verifier) for an
/// access token, adding the client secret that only the server holds (the notes-vault app's backend code exchange).
struct OAuthRoutes {
    let configuration: GitHubOAuthConfiguration
    let keys: ServerKeys
    let logger: Logger
    let limiter: RateLimiter
    /// A session that never follows redirects: the request carries the client secret, which goes to the configured
    /// token URL and nowhere else.
    let session: URLSession

    init(configuration: GitHubOAuthConfiguration, keys: ServerKeys, logger: Logger) {
        self.configuration = configuration
        self.keys = keys
        self.logger = logger
        self.limiter = RateLimiter(limit: configuration.exchangesPerAddress, window: configuration.rateLimitWindow)
        self.session = URLSession(configuration: .ephemeral, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    struct ExchangeRequest: Decodable {
        var code: String
        var codeVerifier: String
        var redirectURI: String?

        enum CodingKeys: String, CodingKey {
            case code
            case codeVerifier = "code_verifier"
            case redirectURI = "redirect_uri"
        }
    }

    struct ExchangeResponse: Encodable, Sendable {
        var accessToken: String
        var tokenType: String
        var scope: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case scope
        }
    }

    func register(on router: Router<FerryRequestContext>) {
        let oauth = router.group("oauth/v1")
            .add(middleware: APIKeyMiddleware(keys: keys))
            .add(middleware: AttemptLimitMiddleware(limiter: limiter) { $0.method == .post })
        oauth.post("github/token") { request, _ in
            var request = request
            guard configuration.isConfigured, let clientID = configuration.clientID, let secret = configuration.clientSecret else {
                throw APIError(.badRequest, .oauthNotConfigured,
                    "GitHub sign-in is not configured on this server: start it with --github-client-id and FERRY_GITHUB_CLIENT_SECRET.")
            }
            let body = try await request.decodeJSON(ExchangeRequest.self)
            guard !body.code.isEmpty, body.code.count <= 512 else {
                throw APIError(.badRequest, .validationFailed, "code must be the authorization code from GitHub's redirect.")
            }
            guard PKCE(verifier: body.codeVerifier) != nil else {
                throw APIError(.badRequest, .validationFailed, "code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~' (RFC 7636).")
            }
            return JSONResponse(try await exchange(body, clientID: clientID, secret: secret))
        }
    }

    /// Forwards the exchange to the token URL as GitHub expects it (form-encoded, JSON answer).
    private func exchange(_ body: ExchangeRequest, clientID: String, secret: String) async throws -> ExchangeResponse {
        guard let url = URL(string: configuration.tokenURL) else {
            throw APIError(.serviceUnavailable, .oauthUpstreamUnavailable, "The configured GitHub token URL is not a URL.")
        }
        var fields = [("client_id", clientID), ("client_secret", secret), ("code", body.code), ("code_verifier", body.codeVerifier)]
        if let redirect = body.redirectURI { fields.append(("redirect_uri", redirect)) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.timeoutInterval = Double(configuration.timeout.components.seconds)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(fields.map { "\($0)=\(Self.formEncoded($1))" }.joined(separator: "&").utf8)

        let outgoing = request
        let data: Data, response: URLResponse
        do {
            (data, response) = try await withTimeout(configuration.timeout) { [session] in try await session.dataCancellingSafely(for: outgoing) }
        } catch {
            logger.warning("GitHub token exchange failed to reach the token URL", metadata: ["ferry.oauth.token_url": "\(configuration.tokenURL)"])
            throw APIError(.badGateway, .oauthUpstreamUnavailable, "GitHub's token endpoint could not be reached; try again.")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if (300..<400).contains(status) {
            logger.warning("GitHub token URL answered a redirect; not followed", metadata: ["ferry.oauth.token_url": "\(configuration.tokenURL)"])
            throw APIError(.badGateway, .oauthUpstreamUnavailable, "GitHub's token endpoint answered with a redirect, which the server does not follow.")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw APIError(.badGateway, .oauthUpstreamUnavailable, "GitHub's token endpoint answered \(status) without JSON.")
        }
        if let token = json["access_token"] as? String, !token.isEmpty, status == 200 {
            logger.info("GitHub token exchanged")
            return ExchangeResponse(accessToken: token, tokenType: json["token_type"] as? String ?? "bearer", scope: json["scope"] as? String ?? "")
        }
        // GitHub reports a bad code or verifier as 200 with `error`; its description is safe to pass on.
        let error = json["error"] as? String ?? "exchange_failed"
        let description = json["error_description"] as? String ?? "GitHub refused the code."
        throw APIError(.badRequest, .oauthExchangeFailed, "GitHub refused the code exchange: \(description) (\(error)).")
    }

    private static func formEncoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// Refuses every redirect, so the response to the first request is the answer.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

extension ErrorCode {
    /// The server has no GitHub OAuth app configured.
    public static let oauthNotConfigured: ErrorCode = "oauth_not_configured"
    /// GitHub refused the code exchange (bad or reused code, wrong verifier, wrong redirect URI).
    public static let oauthExchangeFailed: ErrorCode = "oauth_exchange_failed"
    /// GitHub's token endpoint could not be reached or answered nonsense.
    public static let oauthUpstreamUnavailable: ErrorCode = "oauth_upstream_unavailable"
}
