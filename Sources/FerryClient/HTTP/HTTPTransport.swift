import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request and returns the server's answer; the seam between the SDK and the network.
///
/// ``DefaultHTTPTransport`` is the real one: ``URLSessionTransport`` on Apple platforms, ``HTTPClientTransport`` on
/// Linux. Tests substitute a fake that answers from memory, so every flow of ``AuthClient`` and ``LaunchRouter``
/// runs without a server.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and head of the answer, whatever its status code.
    ///
    /// Throws a `URLError` when no answer arrives: `.timedOut` past the transport's timeout, another code
    /// when the network or the host cannot be reached.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

#if canImport(AsyncHTTPClient)
/// The transport ``AuthClient`` and ``HealthProbe`` use unless given another: ``HTTPClientTransport`` on Linux,
/// ``URLSessionTransport`` on Apple platforms.
public typealias DefaultHTTPTransport = HTTPClientTransport
#else
/// The transport ``AuthClient`` and ``HealthProbe`` use unless given another: ``HTTPClientTransport`` on Linux,
/// ``URLSessionTransport`` on Apple platforms.
public typealias DefaultHTTPTransport = URLSessionTransport
#endif
