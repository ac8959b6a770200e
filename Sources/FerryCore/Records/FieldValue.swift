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
    /// lowercase, bytes as standard base64, blob references as `{sha256, size, content_type}`, integers integral. `null` is always accepted (it clears the field).
    public static func normalized(_ value: JSONValue, for field: FieldDefinition) throws(Mismatch) -> JSONValue {
        func mismatch(_ expected: String) -> Mismatch {
            let type = field.type.rawValue
            let article = "aeiou".contains(type.first ?? "x") ? "an" : "a"
            var shown = value.jsonText
            if shown.count > 40 { shown = shown.prefix(37) + "…" }
            return Mismatch(field: field.name, message: "expected \(expected) for \(article) \(type) field, not \(shown)")
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
            guard let uuid = UUID(wireText: text) else { throw mismatch("a UUID") }
            return .string(uuid.lowercasedText)
        case (.bytes, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw mismatch("base64 bytes") }
            return .string(data.base64EncodedString())
        case (.blob, _):
            do {
                return try BlobReference(json: value).json
            } catch {
                throw Mismatch(field: field.name, message: error.description)
            }
        default:
            throw mismatch(field.type == .text ? "a string" : field.type == .bool ? "true or false" : field.type == .integer ? "a whole number" : "a \(field.type.rawValue)")
        }
    }
}

/// ISO 8601 timestamps as Ferry writes them: UTC, milliseconds, `Z`.
public enum Timestamp {
    /// Reads ISO 8601 (RFC 3339): `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds, then `Z` or an offset
    /// (`±HH:MM`, `±HHMM`, `±HH`), in the proleptic Gregorian calendar PostgreSQL uses. A date that does not exist
    /// (`2024-02-30`, hour 24) is refused rather than rolled over.
    public static func parse(_ text: String) -> Date? {
        var reader = DigitReader(Array(text.utf8))
        guard let year = reader.number(4), reader.skip("-"), let month = reader.number(2), reader.skip("-"), let day = reader.number(2),
              reader.skip(anyOf: "Tt "), let hour = reader.number(2), reader.skip(":"), let minute = reader.number(2),
              reader.skip(":"), let second = reader.number(2)
        else { return nil }
        var fraction = 0.0
        if reader.skip(".") {
            var scale = 0.1
            var count = 0
            while let digit = reader.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                count += 1
            }
            guard count > 0 else { return nil }
        }
        var offsetMinutes: Int64 = 0
        if reader.skip(anyOf: "Zz") {
        } else if let sign = reader.sign() {
            guard let hours = reader.number(2) else { return nil }
            var minutes: Int64 = 0
            if reader.skip(":") {
                guard let value = reader.number(2) else { return nil }
                minutes = value
            } else if let value = reader.number(2) {
                minutes = value
            }
            guard hours < 24, minutes < 60 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            return nil
        }
        guard reader.isAtEnd, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Reads fixed-width digit groups and separators of an ASCII timestamp.
    private struct DigitReader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        var isAtEnd: Bool { index == bytes.count }

        mutating func digit() -> Int64? {
            guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { return nil }
            defer { index += 1 }
            return Int64(bytes[index] - UInt8(ascii: "0"))
        }

        mutating func number(_ width: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<width {
                guard let next = digit() else { return nil }
                value = value * 10 + next
            }
            return value
        }

        mutating func skip(_ separator: Unicode.Scalar) -> Bool {
            skip(anyOf: String(separator))
        }

        mutating func skip(anyOf characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }

        mutating func sign() -> Int64? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }

    /// `2026-11-21T10:00:00.000Z`, rounded to the millisecond, so formatting what ``parse(_:)`` read gives the same
    /// text back for every year from 0000 to 9999 (Foundation's formatter lost a millisecond near year 9999).
    /// Whether `text` has the shape ``format(_:)`` writes (`YYYY-MM-DDTHH:MM:SS.mmmZ`): such a text reads back as itself
    /// (or not at all), so readers pass it on without parsing and writing it again.
    public static func hasCanonicalShape(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { hasCanonicalShape(utf8: $0) }
    }

    /// Whether the UTF-8 `bytes` have the shape ``format(_:)`` writes (as ``hasCanonicalShape(_:)``).
    public static func hasCanonicalShape(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 24 else { return false }
        for (index, byte) in bytes.enumerated() {
            let expected: UInt8? = switch index {
            case 4, 7: UInt8(ascii: "-")
            case 10: UInt8(ascii: "T")
            case 13, 16: UInt8(ascii: ":")
            case 19: UInt8(ascii: ".")
            case 23: UInt8(ascii: "Z")
            default: nil
            }
            if let expected { guard byte == expected else { return false } } else { guard byte &- UInt8(ascii: "0") < 10 else { return false } }
        }
        return true
    }

    public static func format(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) < 4e14 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        let total = Int64(milliseconds)
        let millisecondsPerDay: Int64 = 86_400_000
        let days = total >= 0 ? total / millisecondsPerDay : (total - millisecondsPerDay + 1) / millisecondsPerDay
        let inDay = total - days * millisecondsPerDay
        let (year, month, day) = civil(daysSince1970: days)
        guard (0...9999).contains(year) else { return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
        // Written digit by digit into 24 bytes: every row a server or device writes is stamped, and building the text
        // from interpolated strings was a tenth of a local write.
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, width: Int, at start: Int) {
            var value = value
            for index in stride(from: start + width - 1, through: start, by: -1) {
                text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, width: 4, at: 0)
        put(month, width: 2, at: 5)
        put(day, width: 2, at: 8)
        put(inDay / 3_600_000, width: 2, at: 11)
        put(inDay / 60_000 % 60, width: 2, at: 14)
        put(inDay / 1000 % 60, width: 2, at: 17)
        put(inDay % 1000, width: 3, at: 20)
        for (index, separator) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")] as [(Int, Unicode.Scalar)] {
            text[index] = UInt8(ascii: separator)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = daysSince1970 + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
