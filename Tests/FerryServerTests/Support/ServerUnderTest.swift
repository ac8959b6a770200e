import FerryServer
import FerryTesting
import Foundation

/// The server a test talks to: in process through HummingbirdTesting (``RouterServer``), which most tests use, or
/// over a socket (``LiveServer``), for what needs one: client addresses, timeouts, streams, aborted bodies.
protocol ServerUnderTest: Sendable {
    /// The server, for its keys and to check what it stored.
    var server: FerryServer { get }
    /// Sends a request to `path` (`/auth/v1/signup`, with its query) and returns the whole answer.
    func exchange(_ method: String, _ path: String, headers: [String: String], body: Data?) async throws -> HTTPClient.Reply
}

extension ServerUnderTest {
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) async throws -> HTTPClient.Reply {
        try await exchange(method, path, headers: headers, body: body)
    }
}

extension LiveServer: ServerUnderTest {
    func exchange(_ method: String, _ path: String, headers: [String: String], body: Data?) async throws -> HTTPClient.Reply {
        try await HTTPClient.send(method, url(path), headers: headers, body: body)
    }
}
