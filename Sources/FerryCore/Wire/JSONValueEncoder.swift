import Foundation

/// Encodes `Encodable` values to a ``JSONValue`` tree, and to compact JSON text with sorted keys.
///
/// The mirror of ``JSONValueDecoder``: a `JSONValue` inside the encoded type is handed over whole, and the text is
/// written in one pass (``JSONValue/write(into:)``). Replies of thousands of records are written here, not by
/// `JSONEncoder`, which cost more than the database work of a pull on Linux.
///
/// ```swift
/// let body: [UInt8] = try JSONValueEncoder().encodeText(PullResponse(changes: [], cursors: [:], hasMore: false))
/// ```
public struct JSONValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// The tree of `value`.
    public func encode(_ value: some Encodable) throws -> JSONValue {
        if let json = value as? JSONValue { return json }
        let encoder = JSONTreeEncoder(codingPath: [])
        try value.encode(to: encoder)
        return encoder.storage.value
    }

    /// The compact JSON text of `value`, keys sorted, as UTF-8.
    public func encodeText(_ value: some Encodable) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(value).write(into: &bytes)
        return bytes
    }

    /// The JSON text of a sync message, written by its one writer (``JSONTextWritable``).
    public func encodeText(_ value: some JSONTextWritable) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.approximateJSONByteCount)
        value.writeJSON(into: &bytes)
        return bytes
    }
}

/// One value being built; containers hold their children by reference until the tree is read.
final class JSONTreeNode {
    /// The value, unless this is a container.
    var scalar: JSONValue = .null
    /// The items, when this is an array (mutated in place: appending is not a copy).
    var items: [JSONTreeNode]?
    /// The members, when this is an object.
    var members: [String: JSONTreeNode]?

    func set(_ value: JSONValue) {
        (scalar, items, members) = (value, nil, nil)
    }

    var value: JSONValue {
        if let items { return .array(items.map(\.value)) }
        if let members { return .object(members.mapValues(\.value)) }
        return scalar
    }
}

/// The `Encoder` for one value of the tree.
final class JSONTreeEncoder: Encoder {
    let storage: JSONTreeNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(codingPath: [any CodingKey], storage: JSONTreeNode = JSONTreeNode()) {
        self.codingPath = codingPath
        self.storage = storage
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if storage.members == nil { (storage.items, storage.members) = (nil, [:]) }
        return KeyedEncodingContainer(KeyedTreeEncodingContainer<Key>(node: storage, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if storage.items == nil { (storage.items, storage.members) = ([], nil) }
        return UnkeyedTreeEncodingContainer(node: storage, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleTreeEncodingContainer(node: storage, codingPath: codingPath)
    }

    /// Encodes `value` into `node`: scalars and `JSONValue`s directly, anything else through its `encode(to:)`.
    static func encode(_ value: some Encodable, into node: JSONTreeNode, codingPath: [any CodingKey]) throws {
        switch value {
        case let json as JSONValue: node.set(json)
        case let text as String: node.set(.string(text))
        case let flag as Bool: node.set(.bool(flag))
        case let number as Int: node.set(.number(Double(number)))
        case let number as Int64: node.set(.number(Double(number)))
        case let number as Double: node.set(.number(number))
        // As JSONEncoder's default strategies: bytes are base64, a URL is its string.
        case let data as Data: node.set(.string(data.base64EncodedString()))
        case let url as URL: node.set(.string(url.absoluteString))
        // Ids in lowercase, as everywhere in Ferry's protocol (Foundation writes them uppercase).
        case let id as UUID: node.set(.string(id.lowercasedText))
        default: try value.encode(to: JSONTreeEncoder(codingPath: codingPath, storage: node))
        }
    }
}

private struct KeyedTreeEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONTreeNode
    let codingPath: [any CodingKey]

    private func child(_ key: Key) -> JSONTreeNode {
        if let existing = node.members?[key.stringValue] { return existing }
        let child = JSONTreeNode()
        node.members?[key.stringValue] = child
        return child
    }

    mutating func encodeNil(forKey key: Key) { child(key).set(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try JSONTreeEncoder.encode(value, into: child(key), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        JSONTreeEncoder(codingPath: codingPath + [key], storage: child(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        JSONTreeEncoder(codingPath: codingPath + [key], storage: child(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { JSONTreeEncoder(codingPath: codingPath, storage: child(Key(stringValue: "super")!)) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { JSONTreeEncoder(codingPath: codingPath + [key], storage: child(key)) }
}

private struct UnkeyedTreeEncodingContainer: UnkeyedEncodingContainer {
    let node: JSONTreeNode
    let codingPath: [any CodingKey]

    var count: Int { node.items?.count ?? 0 }

    private func append() -> JSONTreeNode {
        let child = JSONTreeNode()
        node.items?.append(child)
        return child
    }

    mutating func encodeNil() { append().set(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try JSONTreeEncoder.encode(value, into: append(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        JSONTreeEncoder(codingPath: codingPath, storage: append()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONTreeEncoder(codingPath: codingPath, storage: append()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { JSONTreeEncoder(codingPath: codingPath, storage: append()) }
}

private struct SingleTreeEncodingContainer: SingleValueEncodingContainer {
    let node: JSONTreeNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() { node.set(.null) }
    mutating func encode(_ value: Bool) { node.set(.bool(value)) }
    mutating func encode(_ value: String) { node.set(.string(value)) }
    mutating func encode(_ value: Double) { node.set(.number(value)) }
    mutating func encode(_ value: Float) { node.set(.number(Double(value))) }
    mutating func encode(_ value: Int) { node.set(.number(Double(value))) }
    mutating func encode(_ value: Int8) { node.set(.number(Double(value))) }
    mutating func encode(_ value: Int16) { node.set(.number(Double(value))) }
    mutating func encode(_ value: Int32) { node.set(.number(Double(value))) }
    mutating func encode(_ value: Int64) { node.set(.number(Double(value))) }
    mutating func encode(_ value: UInt) { node.set(.number(Double(value))) }
    mutating func encode(_ value: UInt8) { node.set(.number(Double(value))) }
    mutating func encode(_ value: UInt16) { node.set(.number(Double(value))) }
    mutating func encode(_ value: UInt32) { node.set(.number(Double(value))) }
    mutating func encode(_ value: UInt64) { node.set(.number(Double(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try JSONTreeEncoder.encode(value, into: node, codingPath: codingPath)
    }
}
