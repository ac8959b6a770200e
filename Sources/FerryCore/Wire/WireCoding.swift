import Foundation

/// A wire type that writes its own compact JSON text (keys sorted), which ``JSONValueEncoder/encodeText(_:)`` uses
/// instead of `Encodable`: pulls and pushes carry thousands of records, and the generic coding machinery (boxed
/// containers, metadata lookups) cost more than the database work.
///
/// The text must be what `encode(to:)` produces; `WireCodingTests` checks both forms agree.
public protocol JSONTextWritable: Encodable {
    /// Appends this value's JSON text to `bytes`.
    func writeJSON(into bytes: inout [UInt8])

    /// About how many bytes ``writeJSON(into:)`` writes, reserved before writing: a pull reply of megabytes otherwise
    /// grows by doubling, copying itself each time.
    var approximateJSONByteCount: Int { get }
}

extension JSONTextWritable {
    public var approximateJSONByteCount: Int { 1024 }
}

/// A wire type read straight from a parsed tree, which ``JSONValueDecoder`` uses instead of `Decodable`; errors are
/// the `DecodingError`s `init(from:)` would throw, with the same coding paths.
public protocol JSONTreeReadable: Decodable {
    /// Reads the value from `json`, found at `codingPath`.
    init(json: JSONValue, codingPath: [any CodingKey]) throws
}

/// Writes one JSON object's members in the order they are given (callers give them sorted).
struct JSONObjectWriter {
    private var isFirst = true

    init(_ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
    }

    /// Writes `"key":` (after a comma unless first); the caller writes the value next.
    mutating func key(_ key: StaticString, _ bytes: inout [UInt8]) {
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
        isFirst = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    func end(_ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes a JSON array of values that write themselves.
    static func array(_ items: [some JSONTextWritable], _ bytes: inout [UInt8]) {
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
    static func write(_ id: UUID, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        id.appendLowercased(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Space id to value, keys sorted, as ``SpaceKeyed`` spells such maps.
    static func write(_ map: [UUID: some BinaryInteger], into bytes: inout [UInt8]) {
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

/// Reads one JSON object's members with the `DecodingError`s and coding paths `Decodable` would give.
struct JSONObjectReader {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    init(_ json: JSONValue, codingPath: [any CodingKey]) throws {
        guard case .object(let members) = json else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self, .init(codingPath: codingPath, debugDescription: "Expected an object.")
            )
        }
        self.members = members
        self.codingPath = codingPath
    }

    /// The value at `key`, or `nil` when absent or `null` (`decodeIfPresent`).
    func optional(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func required(_ key: String) throws -> JSONValue {
        guard let value = members[key] else {
            throw DecodingError.keyNotFound(WireKey(key), .init(codingPath: codingPath, debugDescription: "No value for key '\(key)'."))
        }
        guard value != .null else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: path(key), debugDescription: "Found null."))
        }
        return value
    }

    func path(_ key: String) -> [any CodingKey] { codingPath + [WireKey(key)] }

    func string(_ key: String) throws -> String {
        guard case .string(let text) = try required(key) else { throw mismatch(String.self, key) }
        return text
    }

    /// The string at `key`, or `nil` when absent or `null` (`decodeIfPresent`).
    func optionalString(_ key: String) throws -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value else { throw mismatch(String.self, key) }
        return text
    }

    func bool(_ key: String) throws -> Bool {
        guard case .bool(let flag) = try required(key) else { throw mismatch(Bool.self, key) }
        return flag
    }

    func int64(_ key: String) throws -> Int64 {
        guard case .number(let number) = try required(key) else { throw mismatch(Int64.self, key) }
        return try Self.integer(number, path: path(key))
    }

    /// The integer at `key`, or `nil` when absent or `null` (`decodeIfPresent`).
    func optionalInt64(_ key: String) throws -> Int64? {
        guard optional(key) != nil else { return nil }
        return try int64(key)
    }

    func uuid(_ key: String) throws -> UUID {
        guard let id = UUID(wireText: try string(key)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Not a UUID."))
        }
        return id
    }

    func object(_ key: String) throws -> [String: JSONValue]? {
        guard let value = optional(key) else { return nil }
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, key) }
        return members
    }

    func array(_ key: String) throws -> [JSONValue]? {
        guard let value = optional(key) else { return nil }
        guard case .array(let items) = value else { throw mismatch([JSONValue].self, key) }
        return items
    }

    /// The array at `key` (required), each item read as an `Item`.
    func items<Item: JSONTreeReadable>(_ key: String, as type: Item.Type) throws -> [Item] {
        guard case .array(let values) = try required(key) else {
            throw DecodingError.typeMismatch([Item].self, .init(codingPath: path(key), debugDescription: "Expected an array."))
        }
        var items: [Item] = []
        items.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            items.append(try Item(json: value, codingPath: path(key) + [WireKey(index: index)]))
        }
        return items
    }

    /// The clock at `key`, or `nil` when absent or `null`.
    func clock(_ key: String) throws -> HLC? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value, let clock = HLC(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Not a clock."))
        }
        return clock
    }

    func clocks(_ key: String) throws -> [String: HLC]? {
        guard let members = try object(key) else { return nil }
        var clocks: [String: HLC] = [:]
        clocks.reserveCapacity(members.count)
        var node: String?
        for (field, value) in members {
            guard case .string(let text) = value, let clock = HLC(text, reusingNode: node) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(key) + [WireKey(field)], debugDescription: "Not a clock."))
            }
            node = clock.node
            clocks[field] = clock
        }
        return clocks
    }

    /// A map keyed by space id (``SpaceKeyed``) of integers.
    func spaceKeyed<Integer: FixedWidthInteger>(_ key: String, as type: Integer.Type) throws -> [UUID: Integer]? {
        guard let members = try object(key) else { return nil }
        var map: [UUID: Integer] = [:]
        for (space, value) in members {
            guard let id = UUID(wireText: space) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "cursor key \(space.prefix(40)) is not a space id"))
            }
            guard case .number(let number) = value else { throw mismatch(Integer.self, key) }
            guard let integer = Integer(exactly: try Self.integer(number, path: path(key) + [WireKey(space)])) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(key) + [WireKey(space)], debugDescription: "\(number) does not fit \(type)."))
            }
            map[id] = integer
        }
        return map
    }

    /// A whole number within ±(2^53 − 1), as ``JSONValueDecoder`` reads integers.
    static func integer(_ number: Double, path: [any CodingKey]) throws -> Int64 {
        guard abs(number) <= 9_007_199_254_740_991, let integer = Int64(exactly: number) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) does not fit Int64."))
        }
        return integer
    }

    private func mismatch(_ type: Any.Type, _ key: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: path(key), debugDescription: "Expected \(type)."))
    }
}

/// A key or array index in a coding path.
struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) { stringValue = string }
    init(index: Int) { (stringValue, intValue) = ("\(index)", index) }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.init(index: intValue) }
}
