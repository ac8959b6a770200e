import FerryCore

/// What ``AuthClient/restore()`` found at launch.
public enum RestoreOutcome: Sendable, Hashable {
    /// The session is valid: its access token had time left, or a refresh just renewed it.
    case signedIn(AuthSession)
    /// No session: none was saved, or the server said it is gone (it has been deleted).
    case signedOut
    /// The server could not confirm the session (network, timeout, 5xx); it is kept, unchanged, for a retry.
    case offline(AuthSession)
}
