import FerryServer
import FerryTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A client that opens a connection and stalls cannot hold it for long.
@Suite("Connection timeouts")
struct ConnectionTimeoutTests {
    @Test("a connection that sends half a request header and stalls is closed within the idle timeout")
    func halfHeader() async throws {
        try await LiveServer.with(.sqlite, configure: { $0.idleTimeout = .seconds(1) }) { server in
            let socket = try StalledClient(port: server.port)
            defer { socket.close() }
            socket.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            let start = ContinuousClock.now
            let closed = socket.waitForClose(within: .seconds(30))
            let elapsed = ContinuousClock.now - start
            #expect(closed, "the server kept the stalled connection open for 30 s")
            #expect(elapsed < .seconds(10), "closed after \(elapsed)")
        }
    }

    @Test("a request whose body stalls is answered 408 body_timeout at the request deadline, not held open")
    func stalledBody() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.requestDeadline = .seconds(1)
            configuration.idleTimeout = .seconds(60)
        }) { server in
            let socket = try StalledClient(port: server.port)
            defer { socket.close() }
            socket.send(
                "POST /auth/v1/signup HTTP/1.1\r\nHost: 127.0.0.1\r\napikey: \(server.server.keys.anonKey)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\":"
            )
            let start = ContinuousClock.now
            let reply = socket.receive(within: .seconds(30))
            #expect(reply.hasPrefix("HTTP/1.1 408"), "\(reply.prefix(200))")
            #expect(reply.contains("body_timeout"))
            #expect(ContinuousClock.now - start < .seconds(20))
        }
    }
}

/// A plain TCP client that writes bytes and waits for the server to close the connection.
private struct StalledClient {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw CocoaError(.fileReadUnknown) }
    }

    func send(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.send(descriptor, $0.baseAddress, $0.count - 1, 0) }
    }

    /// Whether the server closed the connection (a read returns 0 or fails) within `timeout`.
    func waitForClose(within timeout: Duration) -> Bool {
        var pollTarget = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000)
        guard poll(&pollTarget, 1, milliseconds) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) <= 0
    }

    /// What the server sends within `timeout` (until it pauses for a second after answering).
    func receive(within timeout: Duration) -> String {
        var received: [UInt8] = []
        var pollTarget = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var wait = Int32(timeout.components.seconds * 1000)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while poll(&pollTarget, 1, wait) > 0 {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
            wait = 1000
        }
        return String(decoding: received, as: UTF8.self)
    }

    func close() { _ = Glibc.close(descriptor) }
}
