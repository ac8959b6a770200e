import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Probes the server with `HEAD /health` and a short timeout: reachable only on a 2xx answer.
///
/// A 503 (the server is up but its database is not) counts as unreachable: nothing the app needs would work.
public struct HealthProbe: ConnectivityProbe {
    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    public var server: URL
    /// How long to wait for an answer.
    public var timeout: Duration

    private let session: URLSession

    /// Creates a probe of `server` that gives up after `timeout` (default 3 s).
    public init(server: URL, timeout: Duration = .seconds(3)) {
        self.server = server
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        // URLSession on Linux rounds its timeouts to whole seconds (0.5 s fires at once), so the probe
        // enforces `timeout` itself and leaves URLSession a whole-second backstop.
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = max(1, seconds.rounded(.up)) + 1
        configuration.timeoutIntervalForResource = max(1, seconds.rounded(.up)) + 1
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.session = URLSession(configuration: configuration)
    }

    public func check() async -> Reachability {
        let session = self.session, url = server.appending(path: "health")
        return await withTaskGroup(of: Reachability.self) { group in
            group.addTask {
                var request = URLRequest(url: url)
                request.httpMethod = "HEAD"
                do {
                    let (_, response) = try await session.data(for: request)
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    return (200..<300).contains(status) ? .reachable : .unreachable(reason: "the server answered \(status)")
                } catch {
                    return .unreachable(reason: (error as? URLError).map(Self.describe) ?? "the request failed")
                }
            }
            group.addTask { [timeout] in
                try? await Task.sleep(for: timeout)
                return .unreachable(reason: "no answer in time")
            }
            let first = await group.next() ?? .unreachable(reason: "no answer in time")
            group.cancelAll()
            return first
        }
    }

    private static func describe(_ error: URLError) -> String {
        switch error.code {
        case .timedOut: "no answer in time"
        case .cannotConnectToHost: "connection refused"
        case .notConnectedToInternet, .networkConnectionLost: "no network"
        case .cannotFindHost, .dnsLookupFailed: "unknown host"
        default: "network error \(error.code.rawValue)"
        }
    }
}
