import Foundation

/// Decodes `Decodable` values from a parsed ``JSONValue``, such as one from ``JSONValue/init(parsing:maximumDepth:)``.
///
/// Parsing first and decoding from the tree keeps a request's cost linear in its size: a `JSONValue` inside the
/// decoded type is handed over whole instead of being decoded kind by kind. Integers must be whole numbers within
/// ±(2^53 − 1), which JSON carries exactly in every language: beyond it a number is not the integer it was written as.
///
/// ```swift
/// let push = try JSONValueDecoder().decode(PushRequest.self, from: JSONValue(parsing: body))
/// ```
public struct JSONValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a `Value` from `json`; throws `DecodingError`s with coding paths, as `JSONDecoder` does.
    public func decode<Value: Decodable>(_ type: Value.Type, from json: JSONValue) throws -> Value {
        try Value(from: JSONTreeDecoder(value: json, codingPath: []))
    }

    /// Parses UTF-8 JSON text (``JSONValue/init(parsing:maximumDepth:)``) and decodes a `Value` from it.
    public func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value {
        try decode(type, from: JSONValue(parsing: bytes))
    }

    /// Reads a sync message (a push, a pull reply) straight from UTF-8 JSON text with its one reader, without a
    /// tree: `DecodingError`s with coding paths for the wrong shape, a ``JSONParseError`` for text that is not JSON.
    package func decode<Value: JSONStreamReadable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value {
        if let value = try bytes.withContiguousStorageIfAvailable({ try JSONTextParser.read(type, from: $0) }) {
            return value
        }
        return try Array(bytes).withUnsafeBufferPointer { try JSONTextParser.read(type, from: $0) }
    }
}

/// The `Decoder` for one value of the tree.
final class JSONTreeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSONValue, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedTreeContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedTreeContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleTreeContainer(value: value, codingPath: codingPath)
    }
}

/// The error for a value of the wrong kind, worded as `JSONDecoder` words it.
private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    let found = switch value {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
    return .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected \(type) but found \(found) instead."))
}

/// Decodes the scalars `Decodable` types ask for; shared by the three containers.
private func decodeScalar<Value: Decodable>(_ type: Value.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> Value {
    if case .null = value, !(type is any ExpressibleByNilLiteral.Type) {
        throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Expected \(type) but found null."))
    }
    switch (type, value) {
    case (is String.Type, .string(let text)): return text as! Value
    case (is Bool.Type, .bool(let flag)): return flag as! Value
    case (is Double.Type, .number(let number)): return number as! Value
    case (is Float.Type, .number(let number)): return Float(number) as! Value
    // As JSONDecoder's default strategies: bytes are base64, a URL is its string.
    case (is Data.Type, .string(let text)):
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "Encountered Data is not valid Base64."))
        }
        return data as! Value
    case (is URL.Type, .string(let text)):
        guard let url = URL(string: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "Invalid URL string."))
        }
        return url as! Value
    case (is String.Type, _), (is Bool.Type, _), (is Double.Type, _), (is Float.Type, _), (is Data.Type, _), (is URL.Type, _):
        throw mismatch(type, value, path)
    default:
        if let integer = type as? any FixedWidthInteger.Type { return try decodeInteger(integer, value, path) as! Value }
        return try Value(from: JSONTreeDecoder(value: value, codingPath: path))
    }
}

private func decodeInteger<Integer: FixedWidthInteger>(_ type: Integer.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> Integer {
    guard case .number(let number) = value else { throw mismatch(type, value, path) }
    guard abs(number) <= 9_007_199_254_740_991, let integer = Integer(exactly: number) else {
        throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) does not fit \(type)."))
    }
    return integer
}

private struct SingleTreeContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeScalar(type, value, codingPath) }
}

private struct KeyedTreeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for key '\(key.stringValue)'."))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeScalar(type, try member(key), codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = members[key.stringValue], value != .null else { return nil }
        return try decodeScalar(type, value, codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONTreeDecoder(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONTreeDecoder(value: members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONTreeDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedTreeContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private var indexKey: IndexKey { IndexKey(intValue: currentIndex) }

    private mutating func next() throws -> JSONValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath + [indexKey], debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = codingPath + [indexKey]
        return try decodeScalar(type, try next(), path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = codingPath + [indexKey]
        return try JSONTreeDecoder(value: try next(), codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = codingPath + [indexKey]
        return try JSONTreeDecoder(value: try next(), codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = codingPath + [indexKey]
        return JSONTreeDecoder(value: try next(), codingPath: path)
    }
}

/// An array index in a coding path.
private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }

    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
