import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests with an ephemeral `URLSession` and gives up after its own timeout, to the millisecond.
public struct URLSessionTransport: HTTPTransport {
    /// How long one request may take, from sending to the last byte of the answer.
    public let timeout: Duration

    private let session: URLSession

    /// Creates a transport whose requests give up after `timeout` (default 30 s: a pull page of 1,000 records from a
    /// busy server or over a slow mobile link fits, and a dead connection is still noticed within half a minute;
    /// 10 s timed out on a loaded test machine). The launch probe uses its own, shorter timeout.
    public init(timeout: Duration = .seconds(30)) {
        self.timeout = timeout
        self.session = URLSession(configuration: .makeEphemeral(backstopFor: timeout))
    }

    /// Sends `request`, throwing `URLError(.timedOut)` once ``timeout`` has passed without a complete answer.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await send(request, timeout: timeout)
    }

    /// Sends `request`, giving up after `timeout` instead of the transport's own.
    func send(_ request: URLRequest, timeout: Duration) async throws -> (Data, HTTPURLResponse) {
        let session = self.session
        return try await withRequestTimeout(timeout) {
            let (data, response) = try await session.dataCancellingSafely(for: request)
            guard let response = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            return (data, response)
        }
    }
}
