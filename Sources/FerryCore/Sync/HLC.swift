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
        let parts = description.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 15, parts[1].count == 5,
              let milliseconds = Int64(parts[0]), milliseconds >= 0,
              let counter = Int(parts[1]), counter >= 0,
              !parts[2].isEmpty, parts[2].utf8.count <= 64,
              parts[2].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        self.init(milliseconds: milliseconds, counter: counter, node: String(parts[2]))
    }

    /// The wire form.
    public var description: String {
        let ms = String(milliseconds)
        let count = String(counter)
        return String(repeating: "0", count: max(0, 15 - ms.count)) + ms + "-"
            + String(repeating: "0", count: max(0, 5 - count.count)) + count + "-" + node
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
