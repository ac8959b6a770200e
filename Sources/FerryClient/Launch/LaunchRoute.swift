/// The screen a cold launch leads to.
public enum LaunchRoute: Sendable, Hashable {
    /// The server cannot be reached, could not confirm the session, or failed the profile check: an offline
    /// screen with a retry. The session, if any, is kept. `reason` says what failed in a few words.
    case offline(reason: String)
    /// Nobody is signed in and the app has never been launched here: the welcome screens, then sign-in.
    case welcome
    /// Nobody is signed in (any more): the sign-in screen.
    case signIn
    /// Signed in, but the profile lacks the `missing` required fields (or does not exist): onboarding.
    case onboarding(missing: [String])
    /// Signed in with a complete profile: the main screen.
    case main

    /// Whether this is the offline screen.
    public var isOffline: Bool {
        if case .offline = self { return true }
        return false
    }
}

/// Where a cold launch goes, and why, in a sentence (`ferry status` prints it).
public struct LaunchDecision: Sendable, Hashable {
    /// The screen to show.
    public var route: LaunchRoute
    /// Why, in one sentence a person can read.
    public var reason: String

    /// Creates a decision.
    public init(route: LaunchRoute, reason: String) {
        self.route = route
        self.reason = reason
    }
}
