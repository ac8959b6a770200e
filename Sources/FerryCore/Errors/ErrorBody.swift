/// The JSON body of every error Ferry's server sends.
///
/// It is the shape Supabase Auth (GoTrue) uses, so one parser serves `/auth/v1` and Ferry's own
/// endpoints: `{"code": 404, "error_code": "not_found", "msg": "No route for GET /nope."}`.
public struct ErrorBody: Sendable, Hashable, Codable, Error {
    /// The HTTP status code, repeated in the body.
    public var code: Int
    /// A stable machine code (see ``ErrorCode``) that clients switch on.
    public var errorCode: String
    /// A message a person can act on. Never contains secrets.
    public var msg: String
    /// With `mutation_id_stale` and `push_out_of_order`: the device's last mutation id the server processed.
    public var lastMutationId: Int64?
    /// With `upload_offset_mismatch`: where the upload stands.
    public var offset: Int64?

    /// Creates an error body.
    public init(code: Int, errorCode: ErrorCode, msg: String, lastMutationId: Int64? = nil) {
        self.code = code
        self.errorCode = errorCode.rawValue
        self.msg = msg
        self.lastMutationId = lastMutationId
    }

    enum CodingKeys: String, CodingKey {
        case code
        case errorCode = "error_code"
        case msg
        case lastMutationId = "last_mutation_id"
        case offset
    }
}

/// Stable machine codes of Ferry's errors; clients compare against these, never against messages.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The code as it appears on the wire.
    public var rawValue: String

    /// Wraps a raw code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a code literal.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The raw code.
    public var description: String { rawValue }

    /// No route matches the request's method and path.
    public static let notFound: ErrorCode = "not_found"
    /// The route exists but not for this HTTP method.
    public static let methodNotAllowed: ErrorCode = "method_not_allowed"
    /// The request is malformed: unreadable JSON, a missing or mistyped parameter.
    public static let badRequest: ErrorCode = "bad_request"
    /// The request body is larger than the server accepts.
    public static let payloadTooLarge: ErrorCode = "payload_too_large"
    /// The request body did not arrive within the request deadline.
    public static let bodyTimeout: ErrorCode = "body_timeout"
    /// The client ended the request before its body was complete (closed or reset the connection).
    public static let requestAborted: ErrorCode = "request_aborted"
    /// The account reached one of the server's quotas (open uploads, bytes stored); the message says which.
    public static let quotaExceeded: ErrorCode = "quota_exceeded"
    /// The database does not answer; retry later.
    public static let unavailable: ErrorCode = "service_unavailable"
    /// The server failed; the request id in the logs tells what happened.
    public static let internalError: ErrorCode = "unexpected_failure"
}

extension ErrorCode {
    // Supabase Auth's codes, spelled as GoTrue spells them.

    /// Wrong email or password.
    public static let invalidCredentials: ErrorCode = "invalid_credentials"
    /// An account with this email exists.
    public static let userAlreadyExists: ErrorCode = "user_already_exists"
    /// The password is too weak; the body's `weak_password.reasons` says why.
    public static let weakPassword: ErrorCode = "weak_password"
    /// The email address is not valid.
    public static let emailAddressInvalid: ErrorCode = "email_address_invalid"
    /// A required parameter is missing or malformed.
    public static let validationFailed: ErrorCode = "validation_failed"
    /// Too many attempts; retry after `Retry-After` seconds.
    public static let overRequestRateLimit: ErrorCode = "over_request_rate_limit"
    /// No `Authorization: Bearer` token.
    public static let noAuthorization: ErrorCode = "no_authorization"
    /// The access token is malformed, expired, or not signed by this server.
    public static let badJWT: ErrorCode = "bad_jwt"
    /// The `apikey` header is missing or wrong.
    public static let invalidAPIKey: ErrorCode = "invalid_api_key"
    /// The session was signed out or revoked.
    public static let sessionNotFound: ErrorCode = "session_not_found"
    /// The session passed its time box or inactivity timeout.
    public static let sessionExpired: ErrorCode = "session_expired"
    /// The refresh token does not exist.
    public static let refreshTokenNotFound: ErrorCode = "refresh_token_not_found"
    /// The refresh token was used before, outside the reuse interval: the session is revoked.
    public static let refreshTokenAlreadyUsed: ErrorCode = "refresh_token_already_used"
    /// The user of the token no longer exists, or an admin named no user.
    public static let userNotFound: ErrorCode = "user_not_found"
    /// An admin banned the user (`ban_duration`): sign-in is refused until the ban ends.
    public static let userBanned: ErrorCode = "user_banned"
    /// An admin's new user has an address another account has.
    public static let emailExists: ErrorCode = "email_exists"
    /// An admin endpoint called without the service-role key.
    public static let notAdmin: ErrorCode = "not_admin"
    /// A password change on a session older than the reauthentication window, without (the right) `current_password`.
    public static let reauthenticationNeeded: ErrorCode = "reauthentication_needed"
    /// An Apple identity token or notice that does not verify (signature, issuer, audience, expiry or nonce).
    public static let invalidIDToken: ErrorCode = "invalid_id_token"
    /// A sign-in provider this server has not set up (Sign in with Apple without `--apple-client-id`).
    public static let providerDisabled: ErrorCode = "provider_disabled"
    /// Password sign-in before the address was confirmed with the mailed code.
    public static let emailNotConfirmed: ErrorCode = "email_not_confirmed"
    /// A mailed code or link that is wrong, used, expired or tried too often.
    public static let otpExpired: ErrorCode = "otp_expired"
    /// Another mail to the same address too soon.
    public static let overEmailSendRateLimit: ErrorCode = "over_email_send_rate_limit"
    /// A mail endpoint on a server without mail set up (`--smtp-url`).
    public static let emailProviderDisabled: ErrorCode = "email_provider_disabled"
    /// A sign-up with neither email nor phone: an anonymous sign-in, which Ferry does not offer.
    public static let anonymousProviderDisabled: ErrorCode = "anonymous_provider_disabled"
    /// A sign-up by phone, which Ferry does not offer.
    public static let phoneProviderDisabled: ErrorCode = "phone_provider_disabled"
    /// The grant type is not supported.
    public static let unsupportedGrantType: ErrorCode = "unsupported_grant_type"
}
