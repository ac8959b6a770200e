/// A range of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`), or one address.
public struct IPNetwork: Sendable, Hashable, LosslessStringConvertible {
    /// The first address of the range.
    public let address: IPAddress
    /// How many leading bits every address of the range shares.
    public let prefixLength: Int

    /// Parses `10.0.0.0/8`, `::1/128` or a bare address (the range of that one address).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.bytes.count * 8
        guard let length = parts.count == 2 ? Int(parts[1]) : bits, (0...bits).contains(length) else { return nil }
        self.address = address
        self.prefixLength = length
    }

    public var description: String { "\(address)/\(prefixLength)" }

    /// Whether `candidate` lies in this range (an IPv4 address never lies in an IPv6 range, nor the reverse).
    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(address.bytes, candidate.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }
}
