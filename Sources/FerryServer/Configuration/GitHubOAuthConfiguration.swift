import Foundation

/// The GitHub OAuth app the server exchanges codes for (`POST /oauth/v1/github/token`).
///
/// The client secret lives only here: clients send the code and their PKCE verifier, the server adds the secret.
public struct GitHubOAuthConfiguration: Sendable, CustomStringConvertible {
    /// The OAuth app's client id; `nil` leaves the endpoint unconfigured (it answers 400 `oauth_not_configured`).
    public var clientID: String?
    /// The OAuth app's client secret; never logged.
    public var clientSecret: String?
    /// GitHub's token endpoint (a stand-in's in tests).
    public var tokenURL = "https://github.com/login/oauth/access_token"
    /// How long the exchange may wait for GitHub.
    public var timeout: Duration = .seconds(10)
    /// Exchanges allowed per client address in ``rateLimitWindow``.
    public var exchangesPerAddress = 30
    /// The window ``exchangesPerAddress`` counts over.
    public var rateLimitWindow: Duration = .seconds(300)

    /// Creates an unconfigured endpoint.
    public init() {}

    /// Whether both the client id and the secret are set.
    public var isConfigured: Bool {
        clientID?.isEmpty == false && clientSecret?.isEmpty == false
    }

    /// Why ``tokenURL`` cannot carry the client secret ("must …"), or `nil` when it can: it must be `https`, or `http` to a
    /// loopback address (a local stand-in), so the secret never crosses a network in the clear.
    public var tokenURLProblem: String? {
        guard let url = URL(string: tokenURL), let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false) else {
            return "must be an http(s) URL, not '\(tokenURL)'"
        }
        if scheme == "https" { return nil }
        let isLoopback = host == "localhost" || IPAddress(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")))?.isLoopback == true
        guard scheme == "http", isLoopback else {
            return "must use https (http only to a loopback address), not '\(tokenURL)'"
        }
        return nil
    }

    /// Describes the configuration without the secret.
    public var description: String {
        "GitHubOAuthConfiguration(clientID: \(clientID ?? "none"), clientSecret: \(clientSecret == nil ? "none" : "set"), tokenURL: \(tokenURL))"
    }
}
