import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client for what no HTTP library sends: half a head, a malformed one, a body that stops, a reader that
/// never reads. Its waits run on threads of their own, never on the cooperative pool the in-process server needs.
public struct RawConnection: Sendable {
    public let descriptor: Int32

    /// Connects to `127.0.0.1:port`; a small `receiveBuffer` (bytes) makes a reader that takes almost nothing.
    public init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw CocoaError(.fileReadUnknown) }
    }

    public func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the server closed the connection (a read returns 0 or fails) within `timeout`; what it sends first is read
    /// and dropped. It waits on a thread of its own: a blocking wait on the cooperative pool would starve the server.
    public func waitForClose(within timeout: Duration) async -> Bool {
        await Self.onThread { [descriptor] in
            let end = ContinuousClock.now + timeout
            var buffer = [UInt8](repeating: 0, count: 4096)
            while ContinuousClock.now < end {
                var pollTarget = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let left = end - ContinuousClock.now
                guard poll(&pollTarget, 1, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)) > 0 else { return false }
                if recv(descriptor, &buffer, buffer.count, 0) <= 0 { return true }
            }
            return false
        }
    }

    /// What the server sends within `timeout` (until it pauses for a second after answering), read on a thread of its own.
    public func receive(within timeout: Duration) async -> String {
        String(decoding: await receiveBytes(within: timeout), as: UTF8.self)
    }

    /// The bytes the server sends within `timeout`, until it pauses for `pause` after sending some (or closes), read on
    /// a thread of its own.
    public func receiveBytes(within timeout: Duration, pause: Duration = .seconds(1)) async -> [UInt8] {
        await Self.onThread { [descriptor] in
            var received: [UInt8] = []
            var pollTarget = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            var wait = Int32(timeout.components.seconds * 1000)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while poll(&pollTarget, 1, wait) > 0 {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                received += buffer[..<count]
                wait = Int32(pause.components.seconds * 1000 + pause.components.attoseconds / 1_000_000_000_000_000)
            }
            return received
        }
    }

    /// Sends `bytes` as they are.
    public func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBufferPointer { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    public func close() { _ = Glibc.close(descriptor) }
}
