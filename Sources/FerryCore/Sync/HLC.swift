import Foundation

/// A hybrid logical clock reading: wall time in milliseconds, a counter for events in the same
/// millisecond, and the writing node's id to break the last tie.
///
/// Readings order totally, so per-field last-writer-wins picks the same winner on every device and on
/// the server, whatever order changes arrive in. On the wire a reading is one string,
/// `<15-digit ms>-<5-digit counter>-<node>`, whose byte order is the clock order.
public struct HLC: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
    /// Milliseconds since 1970.
    public var milliseconds: Int64
    /// Orders events within one millisecond.
    public var counter: Int
    /// The writer: a device id (lowercase UUID) or `server`.
    public var node: String

    /// The largest counter; a clock that would pass it moves to the next millisecond instead.
    public static let maximumCounter = 99_999
    /// The reading below every other.
    public static let zero = HLC(milliseconds: 0, counter: 0, node: "")

    /// Creates a reading.
    public init(milliseconds: Int64, counter: Int, node: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.node = node
    }

    /// Parses the wire form; `nil` when it is malformed.
    public init?(_ description: String) {
        self.init(description, reusingNode: nil)
    }

    /// Parses the wire form, taking `reusingNode` as the node when the text names that node (the clocks of one
    /// record mostly share a writer: one string for all of them, not one allocation each).
    init?(_ description: String, reusingNode: String?) {
        // Parsed on the UTF-8 bytes: clocks are decoded for every field of every pulled change, and Character's
        // Unicode properties made parsing the largest single cost of an initial sync (`ferry-benchmark` profile).
        var text = description
        guard let clock = text.withUTF8({ Self.parse($0, reusingNode: reusingNode) }) else { return nil }
        self = clock
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, reusingNode: String? = nil) -> HLC? {
        guard let (milliseconds, counter) = numbers(bytes) else { return nil }
        let node = UnsafeBufferPointer(rebasing: bytes[22...])
        if var known = reusingNode, known.utf8.count == node.count, known.withUTF8({ $0.elementsEqual(node) }) {
            return HLC(milliseconds: milliseconds, counter: counter, node: known)
        }
        guard node.allSatisfy(isNodeByte) else { return nil }
        return HLC(milliseconds: milliseconds, counter: counter, node: String(decoding: node, as: UTF8.self))
    }

    /// Whether `bytes` are a clock's wire form, checked without making the clock.
    static func isWireForm(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        numbers(bytes) != nil && bytes[22...].allSatisfy(isNodeByte)
    }

    /// The milliseconds and counter of a wire form, once its length and dashes are right.
    private static func numbers(_ bytes: UnsafeBufferPointer<UInt8>) -> (milliseconds: Int64, counter: Int)? {
        let dash = UInt8(ascii: "-")
        guard bytes.count > 22, bytes.count <= 22 + 64, bytes[15] == dash, bytes[21] == dash else { return nil }
        var milliseconds: Int64 = 0
        for index in 0..<15 {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            milliseconds = milliseconds * 10 + Int64(digit)
        }
        var counter = 0
        for index in 16..<21 {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            counter = counter * 10 + Int(digit)
        }
        return (milliseconds, counter)
    }

    /// ASCII letters, digits, `-` and `_`.
    private static func isNodeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// The wire form.
    public var description: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(22 + node.utf8.count)
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the wire form to `bytes`, without building a `String` (every field of every pushed and pulled row
    /// carries a clock).
    public func write(into bytes: inout [UInt8]) {
        guard (0..<1_000_000_000_000_000).contains(milliseconds), (0..<100_000).contains(counter) else {
            let ms = String(milliseconds)
            let count = String(counter)
            let text = String(repeating: "0", count: max(0, 15 - ms.count)) + ms + "-"
                + String(repeating: "0", count: max(0, 5 - count.count)) + count + "-" + node
            bytes.append(contentsOf: text.utf8)
            return
        }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: 22))
        bytes[start + 15] = UInt8(ascii: "-")
        bytes[start + 21] = UInt8(ascii: "-")
        var rest = milliseconds
        for index in stride(from: 14, through: 0, by: -1) where rest > 0 {
            bytes[start + index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        var count = counter
        for index in stride(from: 20, through: 16, by: -1) where count > 0 {
            bytes[start + index] = UInt8(ascii: "0") + UInt8(count % 10)
            count /= 10
        }
        bytes.append(contentsOf: node.utf8)
    }

    /// The wall time of the reading.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public static func < (lhs: HLC, rhs: HLC) -> Bool {
        (lhs.milliseconds, lhs.counter, lhs.node) < (rhs.milliseconds, rhs.counter, rhs.node)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let clock = HLC(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a clock: \(text.prefix(40))"))
        }
        self = clock
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Milliseconds since 1970 of `date`.
extension Date {
    var ferryMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}
