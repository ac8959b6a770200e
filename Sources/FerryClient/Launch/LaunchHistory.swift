/// Remembers whether the app has been launched on this device before, so the welcome screens show only once.
///
/// A reinstall forgets it (a new install starts with an empty history), as it forgets the session.
public protocol LaunchHistory: Sendable {
    /// Whether a launch has been recorded.
    var hasLaunchedBefore: Bool { get }
    /// Records that the app has been launched (and its welcome screens seen).
    func recordLaunch() throws
    /// Forgets every recorded launch; the next cold launch is a first launch again.
    func reset() throws
}
