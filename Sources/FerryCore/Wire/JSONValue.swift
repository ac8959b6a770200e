import Foundation

/// Any JSON value, for metadata and `json` fields whose shape the app owns.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        // Decoded from an already parsed tree: the value is there whole, so nothing is tried kind by kind.
        if let tree = decoder as? JSONTreeDecoder {
            self = tree.value
            return
        }
        // Other decoders offer no way to ask a value's kind, so each kind is tried, each miss building an error:
        // fine for small values; request bodies go through JSONValue(parsing:) and JSONValueDecoder instead.
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The members of an object, or `nil`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The items of an array, or `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The string, or `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, or `nil`.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }
}

extension JSONValue {
    /// Whether any string or key inside contains U+0000, which PostgreSQL cannot store in text or jsonb.
    public var containsNUL: Bool {
        switch self {
        // A byte scan: `String.contains(_:)` goes through Foundation's Unicode search, a cost on every pulled field.
        case .string(let text): Self.hasNUL(text)
        case .array(let items): items.contains { $0.containsNUL }
        case .object(let members): members.contains { Self.hasNUL($0.key) || $0.value.containsNUL }
        case .null, .bool, .number: false
        }
    }

    /// `memchr` over a native string's bytes: through `String.UTF8View` each byte cost a call (a fifth of checking a
    /// pushed record's values).
    private static func hasNUL(_ text: String) -> Bool {
        let found: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
        return found ?? text.utf8.contains(0)
    }
}
