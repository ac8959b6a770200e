import FerryCore

/// The session cannot be used: nobody is signed in on this device, the server ended the session
/// (`session_not_found`, `refresh_token_not_found`…), or the session could not be read or saved on the device.
///
/// Only these end a session; a request that failed otherwise (no network, a 5xx, a refusal) is a ``RemoteError``
/// and keeps it.
public struct AuthError: FerryError, Hashable {
    /// The stable machine code: the server's verdict, `not_signed_in`, or `session_store_failed`.
    public var code: ErrorCode
    /// What went wrong, in a sentence a person can act on. Never contains a token or a password.
    public var message: String
    /// The HTTP status of the server's verdict, or `nil` when the device decided.
    public var status: Int?

    /// Creates an error.
    public init(code: ErrorCode, message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    /// Whether the person must sign in again: true for the server's verdicts (`session_not_found`,
    /// `session_expired`, `refresh_token_not_found`, `refresh_token_already_used`, `user_not_found`) and for
    /// `not_signed_in`; false only when the session store failed.
    public var isSessionGone: Bool { Self.sessionGoneCodes.contains(code) }

    static let sessionGoneCodes: Set<ErrorCode> = [
        .sessionNotFound, .sessionExpired, .refreshTokenNotFound, .refreshTokenAlreadyUsed, .userNotFound, .notSignedIn,
    ]

    /// There is no session: nobody signed in on this device, or the session was signed out.
    static let notSignedIn = AuthError(code: .notSignedIn, message: "Nobody is signed in on this device.")

    /// A failure of the session store, wrapped so callers see one error type.
    static func store(_ error: any Error, _ action: String) -> AuthError {
        if let error = error as? AuthError { return error }
        return AuthError(code: .sessionStoreFailed, message: "Could not \(action) the saved session: \(error).")
    }
}
