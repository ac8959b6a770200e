import Foundation

/// Checks a JSON value against a field's type and puts it in Ferry's one wire form for that type.
public enum FieldValue {
    /// Why a value does not fit its field.
    public struct Mismatch: Error, Sendable, Hashable, CustomStringConvertible {
        /// The field.
        public var field: String
        /// What was expected.
        public var message: String

        public var description: String { "\(field): \(message)" }
    }

    /// `value` in canonical wire form for `field`: timestamps as ISO 8601 UTC with milliseconds, UUIDs
    /// lowercase, blobs as standard base64, integers integral. `null` is always accepted (it clears the field).
    public static func normalized(_ value: JSONValue, for field: FieldDefinition) throws(Mismatch) -> JSONValue {
        func mismatch(_ expected: String) -> Mismatch {
            Mismatch(field: field.name, message: "expected \(expected) for a \(field.type.rawValue) field")
        }
        if value.isNull { return .null }
        if value.containsNUL {
            throw Mismatch(field: field.name, message: "text cannot contain the NUL character (U+0000)")
        }
        switch (field.type, value) {
        case (.text, .string), (.json, _):
            return value
        case (.bool, .bool):
            return value
        case (.integer, .number(let number)):
            guard number.rounded() == number, abs(number) < 9.007_199_254_740_992e15 else { throw mismatch("a whole number") }
            return value
        case (.real, .number):
            return value
        case (.timestamp, .string(let text)):
            guard let date = Timestamp.parse(text) else { throw mismatch("an ISO 8601 timestamp") }
            return .string(Timestamp.format(date))
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw mismatch("a UUID") }
            return .string(uuid.uuidString.lowercased())
        case (.blob, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw mismatch("base64 bytes") }
            return .string(data.base64EncodedString())
        default:
            throw mismatch(field.type == .text ? "a string" : field.type == .bool ? "true or false" : "a \(field.type.rawValue)")
        }
    }
}

/// ISO 8601 timestamps as Ferry writes them: UTC, milliseconds, `Z`.
public enum Timestamp {
    /// Reads ISO 8601 with or without fractional seconds, with any offset.
    public static func parse(_ text: String) -> Date? {
        let strategy = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        if let date = try? strategy.parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// `2026-11-21T10:00:00.000Z`.
    public static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
