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

    /// Creates an error body.
    public init(code: Int, errorCode: ErrorCode, msg: String) {
        self.code = code
        self.errorCode = errorCode.rawValue
        self.msg = msg
    }

    enum CodingKeys: String, CodingKey {
        case code
        case errorCode = "error_code"
        case msg
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
    /// The database does not answer; retry later.
    public static let unavailable: ErrorCode = "service_unavailable"
    /// The server failed; the request id in the logs tells what happened.
    public static let internalError: ErrorCode = "unexpected_failure"
}
