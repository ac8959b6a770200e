/// The counters behind `/auth/v1`'s rate limits, one per rule (docs/auth.md, "Passwords and sign-in attempts").
struct AuthLimits: Sendable {
    /// Sign-in and sign-up attempts per client, counted before the body is read (``AttemptLimitMiddleware``).
    let attemptsPerClient: RateLimiter
    /// Failed sign-ins per email and client: a guesser locks out only their own address.
    let failuresPerEmailAndClient: RateLimiter
    /// Failed sign-ins per email from every client, against guessing spread over many addresses. It never locks
    /// out a device that holds a session: refreshing needs no password, and a password sign-in that carries the
    /// account's live access token is let through.
    let failuresPerAccount: RateLimiter
    /// Password changes per account (each costs a hash, and maybe a verification).
    let passwordChangesPerAccount: RateLimiter

    init(_ configuration: AuthConfiguration) {
        let window = configuration.rateLimitWindow
        attemptsPerClient = RateLimiter(limit: configuration.signInAttemptsPerAddress, window: window)
        failuresPerEmailAndClient = RateLimiter(limit: configuration.signInAttemptsPerEmail, window: window)
        failuresPerAccount = RateLimiter(limit: configuration.signInFailuresPerAccount, window: window)
        passwordChangesPerAccount = RateLimiter(limit: configuration.passwordChangesPerAccount, window: window)
    }
}
