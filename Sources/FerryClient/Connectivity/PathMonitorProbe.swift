#if canImport(Network)
import Dispatch
import Network
import Synchronization

/// On Apple platforms: answers "no network" at once from `NWPathMonitor`, and asks `server` (usually a
/// ``HealthProbe``) only when a network path exists, so an offline launch does not wait for a timeout.
///
/// Compiled only where the Network framework exists; Linux uses ``HealthProbe`` directly.
public final class PathMonitorProbe: ConnectivityProbe {
    private let server: any ConnectivityProbe
    private let monitor: NWPathMonitor
    private let status = Mutex<NWPath.Status?>(nil)

    /// Starts monitoring the device's network path and delegates server checks to `server`.
    public init(server: any ConnectivityProbe) {
        self.server = server
        self.monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { [weak self] path in self?.status.withLock { $0 = path.status } }
        monitor.start(queue: DispatchQueue(label: "ferry.path-monitor"))
    }

    deinit {
        monitor.cancel()
    }

    public func check() async -> Reachability {
        if status.withLock({ $0 }) == .unsatisfied {
            return .unreachable(reason: "no network")
        }
        return await server.check()
    }
}
#endif
