import Foundation

/// A one-shot HTTP listener on `127.0.0.1` that receives the OAuth redirect (RFC 8252 §7.3 loopback redirect)
/// and checks its `state`. A small POSIX socket: no server framework in the client.
public final class LoopbackRedirectListener: Sendable {
    private let socketDescriptor: Int32
    /// The bound port.
    public let port: Int

    /// Binds a free port on `127.0.0.1`.
    public init() throws {
        #if os(Linux)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw VaultError(.oauthFailed, "Cannot open a loopback socket for the GitHub redirect.") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 4) == 0 else {
            closeDescriptor(descriptor)
            throw VaultError(.oauthFailed, "Cannot listen on 127.0.0.1 for the GitHub redirect.")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        socketDescriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
        closeDescriptor(socketDescriptor)
    }

    /// `http://127.0.0.1:PORT/callback`.
    public var redirectURI: String { "http://127.0.0.1:\(port)/callback" }

    /// Stops listening.
    public func close() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
    }

    /// Waits for the redirect and returns its `code`; fails when `state` does not match, when the user denied
    /// access, or at the deadline. Requests to other paths (a browser's favicon) are answered 404 and ignored.
    public func waitForCode(expectedState: String, timeout: Duration) async throws -> String {
        let descriptor = socketDescriptor
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try Self.serve(descriptor, expectedState: expectedState, deadline: deadline) })
            }
        }
    }

    private static func serve(_ listening: Int32, expectedState: String, deadline: Date) throws -> String {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw VaultError(.oauthFailed, "GitHub sign-in timed out: the browser did not come back.") }
            var poller = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000))
            guard ready > 0 else {
                if ready < 0 && errno != EINTR { throw VaultError(.oauthFailed, "GitHub sign-in was cancelled.") }
                continue
            }
            if poller.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { throw VaultError(.oauthFailed, "GitHub sign-in was cancelled.") }
            let connection = accept(listening, nil, nil)
            guard connection >= 0 else { continue }
            defer { closeDescriptor(connection) }
            guard let target = readRequestTarget(connection), let components = URLComponents(string: "http://127.0.0.1" + target) else { continue }
            guard components.path == "/callback" else {
                respond(connection, status: "404 Not Found", text: "Not found.")
                continue
            }
            let items = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
            if let error = items["error"] {
                respond(connection, status: "200 OK", text: "GitHub sign-in failed (\(error)). You can close this window.")
                throw VaultError(.oauthFailed, "GitHub sign-in failed: \(items["error_description"] ?? error).")
            }
            guard let state = items["state"], state == expectedState else {
                respond(connection, status: "400 Bad Request", text: "The sign-in response does not match this request (state). Start again.")
                throw VaultError(.oauthFailed, "GitHub sign-in failed: the redirect's state does not match (a forged or stale redirect).")
            }
            guard let code = items["code"], !code.isEmpty else {
                respond(connection, status: "400 Bad Request", text: "The sign-in response has no code.")
                throw VaultError(.oauthFailed, "GitHub sign-in failed: the redirect carries no code.")
            }
            respond(connection, status: "200 OK", text: "Signed in to GitHub. You can close this window and return to Ferry.")
            return code
        }
    }

    /// The request target of the first line (`GET /callback?code=… HTTP/1.1`).
    private static func readRequestTarget(_ connection: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 8192)
        var received = 0
        while received < buffer.count {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + received, $0.count - received, 0) }
            guard count > 0 else { break }
            received += count
            if buffer[..<received].contains(UInt8(ascii: "\n")) { break }
        }
        let text = String(decoding: buffer[..<received], as: UTF8.self)
        let parts = text.split(separator: "\r\n").first?.split(separator: " ") ?? []
        guard parts.count >= 2, parts[0] == "GET" else { return nil }
        return String(parts[1])
    }

    private static func respond(_ connection: Int32, status: String, text: String) {
        let body = "<!doctype html><meta charset=utf-8><title>Ferry</title><p>\(text)</p>"
        let response = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        #if os(Linux)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        _ = response.withCString { send(connection, $0, strlen($0), flags) }
    }
}

/// Closes a file descriptor (a free function, so `close` is the C one, not ``LoopbackRedirectListener/close()``).
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
