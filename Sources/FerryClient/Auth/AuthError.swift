import FerryCore

/// Why an account operation failed: a stable ``code`` to switch on and a ``message`` a person can act on.
///
/// Codes from the server are the ones it sent (`ErrorCode.invalidCredentials`,
/// `ErrorCode.refreshTokenNotFound`…); failures on the device have codes of their own
/// (`ErrorCode.networkUnavailable`, `ErrorCode.requestTimedOut`…).
public struct AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable machine code.
    public var code: ErrorCode
    /// What went wrong, in a sentence a person can act on. Never contains a token or a password.
    public var message: String
    /// The HTTP status of the answer, or `nil` when no answer came.
    public var status: Int?
    /// How long the server asked to wait before retrying (its `Retry-After` header), if it said.
    public var retryAfter: Duration?
    /// With `mutation_id_stale`: the last mutation id the server processed for this device.
    public var lastMutationId: Int64?
    /// With `upload_offset_mismatch`: where the server's copy of the upload stands.
    public var uploadOffset: Int64?

    /// Creates an error.
    public init(code: ErrorCode, message: String, status: Int? = nil, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
    }

    /// The message.
    public var description: String { message }

    /// Whether the session can no longer be used and the person must sign in again.
    ///
    /// True for the server's explicit verdicts (`session_not_found`, `session_expired`, `refresh_token_not_found`,
    /// `refresh_token_already_used`, `user_not_found`) and for `ErrorCode.notSignedIn`.
    /// Nothing else — in particular no network failure — ends a session.
    public var isSessionGone: Bool { Self.sessionGoneCodes.contains(code) }

    /// Whether the server could not be reached or could not serve: a network failure, a timeout, or a 5xx.
    ///
    /// Such a failure is temporary; the session is kept and the app shows an offline state with a retry.
    public var isOffline: Bool {
        code == .networkUnavailable || code == .requestTimedOut || (status.map { $0 >= 500 } ?? false)
    }

    /// Whether the server refused because of too many attempts; ``retryAfter`` says how long to wait.
    public var isRateLimited: Bool { code == .overRequestRateLimit }

    static let sessionGoneCodes: Set<ErrorCode> = [
        .sessionNotFound, .sessionExpired, .refreshTokenNotFound, .refreshTokenAlreadyUsed, .userNotFound, .notSignedIn,
    ]

    /// There is no session: nobody signed in on this device, or the session was signed out.
    static let notSignedIn = AuthError(code: .notSignedIn, message: "Nobody is signed in on this device.")
}
