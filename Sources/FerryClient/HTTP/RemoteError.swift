import FerryCore

/// A request to the server that failed: refused (its status and `error_code`), not served (5xx), or never answered
/// (`network_unavailable`, `request_timed_out`). Every HTTP call the SDK makes (account, sync, devices, profile,
/// blobs, the stream) throws this one type, except the server's verdict that the session is over, which is an
/// ``AuthError``.
public struct RemoteError: FerryError, Hashable {
    /// The server's `error_code`, or the device's own code when no answer came.
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

    /// Whether the server could not be reached or could not serve: a network failure, a timeout, or a 5xx.
    ///
    /// Such a failure is temporary; the session is kept and the app shows an offline state with a retry.
    public var isOffline: Bool {
        code == .networkUnavailable || code == .requestTimedOut || (status.map { $0 >= 500 } ?? false)
    }

    /// Whether the server refused because of too many attempts; ``retryAfter`` says how long to wait.
    public var isRateLimited: Bool { code == .overRequestRateLimit }

    /// A 2xx answer whose body is not the documented JSON.
    static func unreadable(_ what: String, status: Int) -> RemoteError {
        RemoteError(code: .unexpectedResponse, message: "The server's answer is not a readable \(what).", status: status)
    }
}
