import FerryCore
import Logging

/// Decides where the app goes at launch: offline screen, welcome, sign-in, onboarding or main.
///
/// A cold launch probes the server, restores the session (refreshing it when needed), and checks that the
/// profile is complete. Nothing on this path signs anyone out because of a network failure: an unreachable
/// server or an unconfirmed session leads to ``LaunchRoute/offline(reason:)`` with the session kept; only the
/// server's explicit "session gone" answer leads to sign-in.
///
/// ```swift
/// let router = LaunchRouter(probe: probe, auth: auth, profiles: ProfileClient(auth: auth), history: history)
/// let decision = await router.coldLaunch()
/// switch decision.route {
/// case .offline: showOffline(retry: { await router.coldLaunch() })
/// case .welcome: showWelcome()
/// case .signIn: showSignIn()
/// case .onboarding(let missing): showOnboarding(missing)
/// case .main: showMain()
/// }
/// ```
public actor LaunchRouter {
    private let probe: any ConnectivityProbe
    private let auth: AuthClient
    private let profiles: any ProfileSource
    private let history: any LaunchHistory
    private let logger: Logger

    /// Creates a router that asks `probe`, `auth`, `profiles` and `history`, in that order.
    public init(
        probe: any ConnectivityProbe, auth: AuthClient, profiles: any ProfileSource, history: any LaunchHistory,
        logger: Logger = Logger(label: "ferry.launch")
    ) {
        self.probe = probe
        self.auth = auth
        self.profiles = profiles
        self.history = history
        self.logger = logger
    }

    /// Runs the cold-launch flow and records the launch unless it ended offline.
    ///
    /// An offline launch is not recorded: the person has not seen the welcome screens yet, so the next launch
    /// that reaches the server still shows them.
    public func coldLaunch() async -> LaunchDecision {
        let decision = await decide()
        if !decision.route.isOffline {
            do {
                try history.recordLaunch()
            } catch {
                logger.warning("could not record the launch", metadata: ["ferry.error": "\(error)"])
            }
        }
        logger.info("launch decided", metadata: ["ferry.launch.route": "\(decision.route)"])
        return decision
    }

    /// Re-checks connectivity when the app returns to the foreground; the session and the screen stay as they are.
    public func warmLaunch() async -> Reachability {
        await probe.check()
    }

    /// Forgets the launch history and signs out, so the next cold launch starts as a first launch.
    ///
    /// The session is removed from this device even when the server cannot be told; throws only when
    /// local state could not be cleared.
    public func debugReset() async throws {
        // Sign out first: a history that cannot be cleared must not leave the session behind.
        var failure: (any Error)?
        do {
            try await auth.signOut(scope: .local)
        } catch let error as AuthError where error.code == .sessionStoreFailed {
            failure = error
        } catch {
            logger.notice("debug reset: the server was not told of the sign-out", metadata: ["ferry.error": "\(error)"])
        }
        try history.reset()
        if let failure { throw failure }
    }

    private func decide() async -> LaunchDecision {
        if case .unreachable(let reason) = await probe.check() {
            return LaunchDecision(route: .offline(reason: reason), reason: "The server is unreachable (\(reason)); any session is kept.")
        }
        let hadSession = (try? await auth.session) != nil
        let outcome: RestoreOutcome
        do {
            outcome = try await auth.restore()
        } catch {
            return LaunchDecision(route: .signIn, reason: "The saved session could not be read (\(error)); sign in again.")
        }
        switch outcome {
        case .offline:
            return LaunchDecision(
                route: .offline(reason: "session not confirmed"),
                reason: "The server could not confirm the session; it is kept for when the server answers."
            )
        case .signedOut where hadSession:
            return LaunchDecision(route: .signIn, reason: "The server ended the session; sign in again.")
        case .signedOut where history.hasLaunchedBefore:
            return LaunchDecision(route: .signIn, reason: "Nobody is signed in.")
        case .signedOut:
            return LaunchDecision(route: .welcome, reason: "First launch and nobody is signed in.")
        case .signedIn(let session):
            return await checkProfile(of: session.user)
        }
    }

    private func checkProfile(of user: AuthUser) async -> LaunchDecision {
        do {
            let profile = try await profiles.profile()
            if profile.isComplete {
                return LaunchDecision(route: .main, reason: "Signed in as \(user.email) with a complete profile.")
            }
            let reason = profile.fields == nil
                ? "Signed in as \(user.email), who has no profile yet (it needs \(profile.missing.joined(separator: ", ")))."
                : "Signed in as \(user.email), whose profile lacks \(profile.missing.joined(separator: ", "))."
            return LaunchDecision(route: .onboarding(missing: profile.missing), reason: reason)
        } catch let error as AuthError where error.isSessionGone {
            return LaunchDecision(route: .signIn, reason: "The server ended the session; sign in again.")
        } catch let error as any FerryError {
            return LaunchDecision(
                route: .offline(reason: error.message),
                reason: "Signed in as \(user.email), but the profile could not be checked: \(error.message)"
            )
        } catch {
            return LaunchDecision(
                route: .offline(reason: "\(error)"),
                reason: "Signed in as \(user.email), but the profile could not be checked: \(error)."
            )
        }
    }
}
