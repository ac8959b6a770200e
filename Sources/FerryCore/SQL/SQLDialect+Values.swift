import Foundation

/// The one conversion between wire values and column values per dialect, shared by the server's SQLite and
/// PostgreSQL storage and the device store, so a value reads back the same wherever it was written.
extension SQLDialect {
    /// How `value` is stored in a column of `type`. Values are expected in wire form (``FieldValue/normalized(_:for:)``);
    /// one that does not fit is refused (``ColumnValueError``), never stored as something else.
    public func columnValue(_ value: JSONValue, type: FieldType) throws(ColumnValueError) -> SQLValue {
        func refused(_ message: String) -> ColumnValueError { ColumnValueError(type: type, message: message) }
        switch (type, value) {
        case (_, .null):
            return .null
        case (.json, _), (.blob, _):
            return self == .postgres ? .json(value.jsonText) : .text(value.jsonText)
        case (.integer, .number(let number)):
            guard number.rounded() == number, abs(number) <= 9_007_199_254_740_991 else { throw refused("\(number), which is not a whole number within ±2^53") }
            return .integer(Int64(number))
        case (.real, .number(let number)):
            guard number.isFinite else { throw refused("a number that is not finite") }
            return .real(number)
        case (.bool, .bool(let flag)):
            return self == .postgres ? .bool(flag) : .integer(flag ? 1 : 0)
        case (.timestamp, .string(let text)):
            guard let date = Timestamp.parse(text) else { throw refused("'\(text.prefix(40))', which is not an ISO 8601 timestamp") }
            return self == .postgres ? .timestamp(date) : .text(Timestamp.format(date))
        case (.uuid, .string(let text)):
            guard let uuid = UUID(wireText: text) else { throw refused("'\(text.prefix(40))', which is not a UUID") }
            return self == .postgres ? .uuid(uuid) : .text(uuid.lowercasedText)
        case (.bytes, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw refused("text that is not standard base64") }
            return .bytes(data)
        case (.text, .string(let text)):
            return .text(text)
        default:
            throw refused("the JSON value \(value.jsonText.prefix(40))")
        }
    }

    /// The wire value of a column of `type` as the driver read it.
    public func wireValue(_ column: SQLValue, type: FieldType) -> JSONValue {
        switch column {
        case .null: .null
        case .integer(let number): type == .bool ? .bool(number != 0) : .number(Double(number))
        case .real(let number): .number(number)
        case .bool(let flag): .bool(flag)
        case .bytes(let data): .string(data.base64EncodedString())
        case .timestamp(let date): .string(Timestamp.format(date))
        case .uuid(let uuid): .string(uuid.lowercasedText)
        case .json(let text): JSONValue(jsonText: text) ?? .string(text)
        case .text(let text):
            switch type {
            case .json, .blob: JSONValue(jsonText: text) ?? .string(text)
            case .timestamp: .string(Timestamp.hasCanonicalShape(text) ? text : Timestamp.parse(text).map(Timestamp.format) ?? text)
            default: .string(text)
            }
        }
    }

    /// The wire value of a column as PostgreSQL renders it in `row_to_json` (timestamps with an offset, `bytea` as
    /// `\x` hex, `jsonb` nested).
    public func wireValue(rendered value: JSONValue, type: FieldType) -> JSONValue {
        switch (type, value) {
        case (.timestamp, .string(let text)) where text.hasSuffix(" BC") && text.hasPrefix("0001-"):
            // PostgreSQL has no year 0: ISO 8601's year 0000 is its "0001 … BC".
            return wireValue(rendered: .string("0000" + text.dropFirst(4).dropLast(3)), type: type)
        case (.timestamp, .string(let text)):
            return wireValue(Timestamp.parse(text).map(SQLValue.timestamp) ?? .text(text), type: type)
        case (.bytes, .string(let text)) where text.hasPrefix("\\x"):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count / 2)
            var high: UInt8?
            for character in text.utf8.dropFirst(2) {
                guard let nibble = character.hexNibble else { return .null }
                if let first = high {
                    bytes.append(first << 4 | nibble)
                    high = nil
                } else {
                    high = nibble
                }
            }
            return wireValue(.bytes(Data(bytes)), type: type)
        default:
            return value
        }
    }
}
