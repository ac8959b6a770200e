#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, parsed strictly (no ports, no brackets); an IPv4-mapped IPv6 address is its IPv4 one.
public struct IPAddress: Sendable, Hashable, LosslessStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    /// Parses `192.0.2.1` or `2001:db8::1`.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let isV4Mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        self.bytes = isV4Mapped ? Array(bytes[12...]) : bytes
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { bytes.count == 16 }

    /// Whether this is a loopback address (`127.0.0.0/8`, `::1`).
    public var isLoopback: Bool {
        isIPv6 ? bytes == [UInt8](repeating: 0, count: 15) + [1] : bytes[0] == 127
    }

    /// What rate limits count against: the address for IPv4; the /64 prefix for IPv6, since one client usually
    /// holds a whole /64 and could otherwise take a fresh address per attempt.
    public var rateLimitKey: String {
        guard isIPv6 else { return description }
        return IPAddress(bytes: Array(bytes[0..<8]) + [UInt8](repeating: 0, count: 8)).description + "/64"
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv6 ? AF_INET6 : AF_INET
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
