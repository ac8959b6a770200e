/// Whether the Ferry server can be reached right now.
public enum Reachability: Sendable, Hashable {
    /// The server answered its health check.
    case reachable
    /// The server did not answer, answered an error, or the network is down; `reason` says which.
    case unreachable(reason: String)

    /// Whether the server answered.
    public var isReachable: Bool { self == .reachable }
}

/// Answers "can I reach the server?", the question an app asks at launch before restoring a session.
///
/// ``HealthProbe`` asks the server itself (`HEAD /health`). On Apple platforms an `NWPathMonitor`-backed
/// probe can answer "no network" without a request; both conform to this protocol.
public protocol ConnectivityProbe: Sendable {
    /// Checks reachability once, within the probe's own timeout.
    func check() async -> Reachability
}
