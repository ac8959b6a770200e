import FerrySecurity
import FerryServer
import Foundation
import Hummingbird
import Logging
import Synchronization

/// A local stand-in for GitHub's OAuth token endpoint (`POST /login/oauth/access_token`), for tests.
///
/// It issues codes bound to a PKCE challenge (as GitHub's authorize page would), and answers an exchange the way
/// GitHub does: a token for the right client secret, code and `code_verifier`, otherwise `200` with `error`. It
/// is not GitHub: it checks what Ferry's exchange must send, nothing more.
public final class GitHubTokenStandIn: Sendable {
    /// The client id it accepts.
    public let clientID = "stand-in-client"
    /// The client secret it accepts.
    public var clientSecret: String { shared.clientSecret }
    /// `http://127.0.0.1:PORT/login/oauth/access_token`.
    public let tokenURL: URL
    /// A URL that answers `307 Temporary Redirect` to ``tokenURL``, which keeps the method and the body (and so the
    /// client secret): a client that follows it exchanges the code after all.
    public var redirectingURL: URL { tokenURL.deletingLastPathComponent().appending(path: "redirect") }

    struct Grant {
        var challenge: String
        var redirectURI: String?
        var isUsed = false
    }

    /// State the route handler and the tests share.
    final class Shared: Sendable {
        let clientSecret = "stand-in-secret-\(UUID().uuidString)"
        let grants = Mutex<[String: Grant]>([:])
        let exchanges = Mutex(0)
    }

    private let shared: Shared

    private init(tokenURL: URL, shared: Shared) {
        self.tokenURL = tokenURL
        self.shared = shared
    }

    /// Issues an authorization code bound to `challenge` (and `redirectURI`, when given), as GitHub's authorize page does.
    public func issueCode(challenge: String, redirectURI: String? = nil) -> String {
        let code = "code-\(UUID().uuidString)"
        shared.grants.withLock { $0[code] = Grant(challenge: challenge, redirectURI: redirectURI) }
        return code
    }

    /// Points a server configuration's GitHub OAuth app at this stand-in (client id, secret, token URL).
    public func configure(_ configuration: inout ServerConfiguration) {
        configuration.githubOAuth.clientID = clientID
        configuration.githubOAuth.clientSecret = clientSecret
        configuration.githubOAuth.tokenURL = tokenURL.absoluteString
    }

    /// How many exchanges it has answered.
    public var exchangeCount: Int { shared.exchanges.withLock { $0 } }

    /// Runs `body` with a stand-in listening on a free loopback port, then stops it.
    public static func with<Result>(_ body: (GitHubTokenStandIn) async throws -> Result) async throws -> Result {
        let shared = Shared()
        let router = Router()
        router.post("login/oauth/access_token") { request, _ -> Response in
            var request = request
            let buffer = try await request.collectBody(upTo: 64 * 1024)
            let form = Self.parseForm(String(buffer: buffer))
            shared.exchanges.withLock { $0 += 1 }
            func answer(_ object: [String: String]) throws -> Response {
                let data = try JSONSerialization.data(withJSONObject: object)
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
            }
            guard form["client_id"] == "stand-in-client", form["client_secret"] == shared.clientSecret else {
                return try answer(["error": "incorrect_client_credentials", "error_description": "The client_id and/or client_secret passed are incorrect."])
            }
            let code = form["code"] ?? ""
            let verifier = form["code_verifier"] ?? ""
            let outcome: String? = shared.grants.withLock { grants in
                guard var grant = grants[code], !grant.isUsed else { return "bad_verification_code" }
                guard PKCE.verify(verifier: verifier, challenge: grant.challenge) else { return "bad_verification_code" }
                if let expected = grant.redirectURI, form["redirect_uri"] != expected { return "redirect_uri_mismatch" }
                grant.isUsed = true
                grants[code] = grant
                return nil
            }
            if let outcome {
                return try answer(["error": outcome, "error_description": "The code passed is incorrect or expired, or the code_verifier does not match."])
            }
            return try answer(["access_token": "gho_standin_\(UUID().uuidString.prefix(8))", "token_type": "bearer", "scope": "repo"])
        }
        router.post("login/oauth/redirect") { _, _ in
            Response(status: .temporaryRedirect, headers: [.location: "/login/oauth/access_token"])
        }
        return try await LoopbackRouter.serve(router, label: "ferry.testing.github-stand-in") { port in
            try await body(GitHubTokenStandIn(tokenURL: URL(string: "http://127.0.0.1:\(port)/login/oauth/access_token")!, shared: shared))
        }
    }

    private static func parseForm(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0) }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}
