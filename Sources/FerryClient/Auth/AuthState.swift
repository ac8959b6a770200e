import FerryCore

/// Whether someone is signed in on this device, as ``AuthClient/stateChanges()`` publishes it.
public enum AuthState: Sendable, Hashable {
    /// A session is held for this user (its access token may be due for a refresh).
    case signedIn(AuthUser)
    /// No session: nobody signed in, they signed out, or the server ended the session.
    case signedOut
    /// The server could not be reached; the session, if any, is kept for when it comes back.
    case offline(AuthUser?)

    /// The user whose session is held, if any.
    public var user: AuthUser? {
        switch self {
        case .signedIn(let user): user
        case .signedOut: nil
        case .offline(let user): user
        }
    }

    /// Whether a session is held, reachable or not.
    public var hasSession: Bool { user != nil }
}
