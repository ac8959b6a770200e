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

    private let transport: DefaultHTTPTransport

    /// Creates a probe of `server` that gives up after `timeout` (default 3 s).
    public init(server: URL, timeout: Duration = .seconds(3)) {
        self.server = server
        self.timeout = timeout
        self.transport = DefaultHTTPTransport(timeout: timeout)
    }

    /// Sends `HEAD /health` and reports reachable only on a 2xx answer within ``timeout``.
    ///
    /// A connection lost before the answer is tried once more: the transport may have sent the probe on a kept-alive
    /// connection the server had just closed (it stopped, or restarted), which says nothing about the network.
    public func check() async -> Reachability {
        var request = URLRequest(url: server.appending(path: "health"))
        request.httpMethod = "HEAD"
        var attempts = 0
        while true {
            attempts += 1
            do {
                let (_, response) = try await transport.send(request, timeout: timeout)
                let status = response.statusCode
                return (200..<300).contains(status) ? .reachable : .unreachable(reason: "the server answered \(status)")
            } catch let error as URLError where error.code == .networkConnectionLost && attempts < 2 && !Task.isCancelled {
                continue
            } catch let error as URLError {
                return .unreachable(reason: error.summary)
            } catch {
                return .unreachable(reason: "the request failed")
            }
        }
    }
}
