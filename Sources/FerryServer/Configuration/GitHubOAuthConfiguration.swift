/// The GitHub OAuth app the server exchanges codes for (`POST /oauth/v1/github/token`).
///
/// The client secret lives only here: clients send the code and their PKCE verifier, the server adds the secret.
public struct GitHubOAuthConfiguration: Sendable, CustomStringConvertible {
    /// The OAuth app's client id; `nil` leaves the endpoint unconfigured (it answers 501).
    public var clientID: String?
    /// The OAuth app's client secret; never logged.
    public var clientSecret: String?
    /// GitHub's token endpoint (a stand-in's in tests).
    public var tokenURL = "https://github.com/login/oauth/access_token"
    /// How long the exchange may wait for GitHub.
    public var timeout: Duration = .seconds(10)

    /// Creates an unconfigured endpoint.
    public init() {}

    /// Whether both the client id and the secret are set.
    public var isConfigured: Bool {
        clientID?.isEmpty == false && clientSecret?.isEmpty == false
    }

    /// Describes the configuration without the secret.
    public var description: String {
        "GitHubOAuthConfiguration(clientID: \(clientID ?? "none"), clientSecret: \(clientSecret == nil ? "none" : "set"), tokenURL: \(tokenURL))"
    }
}
