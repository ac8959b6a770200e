import FerryCore

extension ErrorCode {
    // Codes for failures the client detects itself; the server never sends these.

    /// The request did not reach the server: no network, connection refused, unknown host, TLS failure.
    public static let networkUnavailable: ErrorCode = "network_unavailable"
    /// The server did not answer within the transport's timeout.
    public static let requestTimedOut: ErrorCode = "request_timeout"
    /// No session is stored on this device; sign in first.
    public static let notSignedIn: ErrorCode = "not_signed_in"
    /// The server answered something the client cannot read (not the documented JSON).
    public static let unexpectedResponse: ErrorCode = "unexpected_response"
    /// The session could not be read from, written to or removed from its store (file or Keychain).
    public static let sessionStoreFailed: ErrorCode = "session_store_failed"
}
