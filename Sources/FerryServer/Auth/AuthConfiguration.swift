/// Token lifetimes, session limits, password cost and rate limits for `/auth/v1`.
public struct AuthConfiguration: Sendable {
    /// How long an access token lives.
    public var accessTokenLifetime: Duration = .seconds(3600)
    /// How long after a refresh token is used a second use still returns the same successor
    /// (several requests of one device refreshing at once must not sign it out).
    public var refreshTokenReuseInterval: Duration = .seconds(10)
    /// The longest a session may live, whatever its activity; `nil` for no limit.
    public var sessionTimebox: Duration?
    /// How long a session may go without a refresh before it expires; `nil` for no limit.
    public var sessionInactivityTimeout: Duration?
    /// How long after signing in a session may change the password without the current one: a stolen access token
    /// alone cannot take the account over for good. Later, `PUT /auth/v1/user` needs `current_password`.
    public var reauthenticationWindow: Duration = .seconds(300)
    /// The scrypt cost of new password hashes.
    public var passwordHashing: PasswordHasher.Parameters = .owasp
    /// Failed sign-ins allowed per email and client address in ``rateLimitWindow``.
    public var signInAttemptsPerEmail = 10
    /// Sign-in and sign-up attempts allowed per client address (an IPv6 client's /64) in ``rateLimitWindow``,
    /// counted before the request's body is read.
    public var signInAttemptsPerAddress = 30
    /// Failed sign-ins allowed per email from all addresses together in ``rateLimitWindow``; past it, a client that has
    /// failed for the account is refused at once (a fresh client, or a device holding a session, still signs in).
    public var signInFailuresPerAccount = 100
    /// Password changes (`PUT /auth/v1/user` with `password`) allowed per account in ``rateLimitWindow``.
    public var passwordChangesPerAccount = 10
    /// How many password hashes may wait for one of the ``PasswordHasher/maximumConcurrentHashes`` slots; a request
    /// that finds the queue full gets 429 `over_request_rate_limit` at once, so floods cannot pile up memory or time.
    public var passwordHashQueueLength = 16
    /// The window the attempt limits count over.
    public var rateLimitWindow: Duration = .seconds(300)
    /// A fixed JWT signing secret (at least 32 bytes), shared by every instance on one database;
    /// `nil` generates one in the data folder on first start.
    public var jwtSecret: String?
    /// The `iss` claim of issued tokens.
    public var issuer = "ferry"

    /// Creates the defaults.
    public init() {}
}
