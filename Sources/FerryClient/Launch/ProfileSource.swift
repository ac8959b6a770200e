import FerryCore

/// Answers "how complete is the signed-in user's profile?", the question that picks onboarding or the main screen.
public protocol ProfileSource: Sendable {
    /// The signed-in user's profile and which required fields it lacks.
    ///
    /// Throws ``RemoteError`` (``RemoteError/isOffline`` when the server cannot be reached), or ``AuthError``
    /// (``AuthError/isSessionGone``) when the session has ended.
    func profile() async throws -> ProfileState
}
