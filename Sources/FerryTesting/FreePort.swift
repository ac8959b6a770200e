import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that was free a moment ago: for a server that must be started, or restarted, on a known port.
///
/// The kernel picks it (bind to port 0) and the socket is closed at once, so another process may take it in between;
/// tests accept that small race to get a fixed address.
public func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard descriptor >= 0, bound else { throw TestSupportError("no free loopback port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}
