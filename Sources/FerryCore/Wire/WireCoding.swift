import Foundation

/// A wire type that writes its own compact JSON text (keys sorted): the sync messages' only writer. Pulls and pushes
/// carry thousands of records, and the generic coding machinery (boxed containers, metadata lookups) cost more than
/// the database work. Its reader is ``JSONStreamReadable``; `WireCodingTests` round-trips every member.
public protocol JSONTextWritable {
    /// Appends this value's JSON text to `bytes`.
    func writeJSON(into bytes: inout [UInt8])

    /// About how many bytes ``writeJSON(into:)`` writes, reserved before writing: a pull reply of megabytes otherwise
    /// grows by doubling, copying itself each time.
    var approximateJSONByteCount: Int { get }
}

extension JSONTextWritable {
    public var approximateJSONByteCount: Int { 1024 }
}

/// Writes one JSON object's members in the order they are given (callers give them sorted).
package struct JSONObjectWriter {
    private var isFirst = true

    package init(_ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
    }

    /// Writes `"key":` (after a comma unless first); the caller writes the value next.
    package mutating func key(_ key: StaticString, _ bytes: inout [UInt8]) {
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
        isFirst = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    package func end(_ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes a JSON array of values that write themselves.
    package static func array(_ items: [some JSONTextWritable], _ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        // By index: a copy of each item (a mutation, say) retained all its texts only to write them.
        for index in items.indices {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            items[index].writeJSON(into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}

extension JSONValue {
    /// A UUID as a lowercase JSON string, without Foundation's formatting (which goes through `sprintf`).
    package static func write(_ id: UUID, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        id.appendLowercased(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Space id to value: an object with lowercase UUID keys, sorted.
    package static func write(_ map: [UUID: some BinaryInteger], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, (space, value)) in map.map({ ($0.key.lowercasedText, $0.value) }).sorted(by: { $0.0 < $1.0 }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            write(space, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: String(value).utf8)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

extension UUID {
    /// The lowercase text form (`uuidString` lowercased), built without Foundation's `sprintf` and a second pass.
    public var lowercasedText: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        appendLowercased(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    package func appendLowercased(to bytes: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        // Written into the array's spare capacity in one pass: a pull reply writes two per change.
        withUnsafeBytes(of: uuid) { raw in
            digits.withUTF8Buffer { hex in
                bytes.append(contentsOf: repeatElement(UInt8(ascii: "-"), count: 36))
                bytes.withUnsafeMutableBufferPointer { buffer in
                    var out = buffer.count - 36
                    for (index, byte) in raw.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 { out += 1 }
                        buffer[out] = hex[Int(byte >> 4)]
                        buffer[out + 1] = hex[Int(byte & 0x0F)]
                        out += 2
                    }
                }
            }
        }
    }

    /// Parses the 36-character text form in either case, as `UUID(uuidString:)` does, without `sscanf`.
    public init?(wireText text: String) {
        var text = text
        guard let parsed = text.withUTF8({ UUID.parse($0) }) else { return nil }
        self = parsed
    }

    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &raw) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = text[position].hexNibble, let low = text[position + 1].hexNibble else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return parsed ? UUID(uuid: raw) : nil
    }
}

extension UInt8 {
    /// The value of this ASCII hex digit (either case), or `nil`.
    var hexNibble: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A coding path's key: an object member or an array index.
struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) { stringValue = string }
    init(index: Int) { (stringValue, intValue) = ("\(index)", index) }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.init(index: intValue) }
}
