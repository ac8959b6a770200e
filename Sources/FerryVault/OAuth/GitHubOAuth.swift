import FerrySecurity
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// GitHub sign-in with PKCE (RFC 7636, S256): the authorize URL with `state`, a loopback redirect, and the code
/// exchange through Ferry's server (`POST /oauth/v1/github/token`), which adds the client secret.
///
/// ```swift
/// let oauth = GitHubOAuth(clientID: "Iv1.abc", server: serverURL, apiKey: anonKey)
/// let token = try await oauth.signIn { url in print("Open \(url)") }
/// try profile.credentialStore.save(VaultCredentials(token: token))
/// ```
public struct GitHubOAuth: Sendable {
    /// The OAuth app's client id (public; the secret stays on the server).
    public var clientID: String
    /// GitHub's authorize page.
    public var authorizeURL: URL
    /// The scopes asked for (`repo` to push to private repositories).
    public var scope: String
    /// Ferry's server, which exchanges the code.
    public var server: URL
    /// The server's anon key, sent as `apikey`.
    public var apiKey: String
    /// How long to wait for the browser to come back.
    public var callbackTimeout: Duration

    /// Creates a sign-in configuration.
    public init(
        clientID: String, server: URL, apiKey: String,
        authorizeURL: URL = URL(string: "https://github.com/login/oauth/authorize")!,
        scope: String = "repo", callbackTimeout: Duration = .seconds(300)
    ) {
        self.clientID = clientID
        self.server = server
        self.apiKey = apiKey
        self.authorizeURL = authorizeURL
        self.scope = scope
        self.callbackTimeout = callbackTimeout
    }

    /// The authorize URL for one attempt: client id, redirect URI, scope, `state` and the S256 challenge.
    public func authorizationURL(redirectURI: String, state: String, pkce: PKCE) -> URL {
        var components = URLComponents(url: authorizeURL, resolvingAgainstBaseURL: false)!
        components.queryItems = (components.queryItems ?? []) + [
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: scope),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: pkce.method),
        ]
        return components.url!
    }

    /// The whole flow: a fresh PKCE pair and `state`, a loopback listener, `open` shows the authorize URL (a
    /// browser, or a printed line), the redirect is checked for `state`, and the code is exchanged for a token.
    public func signIn(open: @Sendable (URL) async throws -> Void) async throws -> String {
        let pkce = PKCE()
        let state = SecureRandom.token(byteCount: 16)
        let listener = try LoopbackRedirectListener()
        defer { listener.close() }
        try await open(authorizationURL(redirectURI: listener.redirectURI, state: state, pkce: pkce))
        let code = try await listener.waitForCode(expectedState: state, timeout: callbackTimeout)
        return try await exchange(code: code, verifier: pkce.verifier, redirectURI: listener.redirectURI)
    }

    /// Exchanges an authorization code for an access token through Ferry's server.
    public func exchange(code: String, verifier: String, redirectURI: String) async throws -> String {
        var request = URLRequest(url: server.appending(path: "oauth/v1/github/token"))
        request.httpMethod = "POST"
        request.timeoutInterval = 30
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(apiKey, forHTTPHeaderField: "apikey")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["code": code, "code_verifier": verifier, "redirect_uri": redirectURI])
        let data: Data, response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw VaultError(.networkUnreachable, "Ferry's server at \(server.absoluteString) cannot be reached to finish the GitHub sign-in.")
        }
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (response as? HTTPURLResponse)?.statusCode == 200, let token = body["access_token"] as? String, !token.isEmpty else {
            let reason = (body["msg"] as? String) ?? (body["message"] as? String) ?? "the server answered \((response as? HTTPURLResponse)?.statusCode ?? 0)"
            let code = (body["error_code"] as? String) ?? (body["code"] as? String) ?? "unknown"
            throw VaultError(.oauthFailed, "GitHub sign-in failed: \(reason) (\(code)).")
        }
        return token
    }
}
