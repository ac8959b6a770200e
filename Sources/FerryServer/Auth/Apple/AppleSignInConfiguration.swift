import Foundation

/// Sign in with Apple (`POST /auth/v1/token?grant_type=id_token`) and Apple's server-to-server notices.
public struct AppleSignInConfiguration: Sendable {
    /// The audiences an identity token may be issued for: the app's bundle id, and its services id for the web. Empty
    /// leaves Sign in with Apple off (`provider_disabled`).
    public var clientIDs: [String] = []
    /// Where Apple publishes its signing keys (a local stand-in's in tests).
    public var keysURL = "https://appleid.apple.com/auth/keys"
    /// How long fetching the keys may take.
    public var timeout: Duration = .seconds(10)
    /// The shortest time between two fetches of the keys: a token naming an unknown key fetches them again (Apple
    /// rotates its keys), but forged key ids cannot make the server hammer Apple.
    public var minimumKeyRefreshInterval: Duration = .seconds(60)

    /// Creates a configuration with Sign in with Apple off.
    public init() {}

    /// Whether any client id is set.
    public var isConfigured: Bool { !clientIDs.isEmpty }
}
