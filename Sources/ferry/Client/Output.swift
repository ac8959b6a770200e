import FerryCore
import Foundation

/// Prints a command's result: a line for people, or JSON with `--json` (compact, keys sorted, written by the same
/// writer as every other JSON of Ferry's).
enum Output {
    /// `object`'s members that have a value (`nil` members are left out) as one JSON line, or `human`.
    static func emit(json: Bool, human: String, _ object: [String: any JSONOutput]) {
        emit(json: json, human: human, JSONValue.members(object))
    }

    /// `object` as one JSON line, or `human`.
    static func emit(json: Bool, human: String, _ object: JSONValue) {
        if json {
            print(object.jsonText)
        } else {
            print(human)
        }
        fflush(nil)  // a reader of a pipe (`sync --watch`) sees each line as it happens
    }
}

/// A value a command prints in its `--json` output.
protocol JSONOutput {
    var json: JSONValue { get }
    /// Whether it is an absent optional, which a command's output leaves out.
    var isAbsent: Bool { get }
}

extension JSONOutput {
    var isAbsent: Bool { false }
}

extension JSONValue: JSONOutput {
    var json: JSONValue { self }
}

extension String: JSONOutput {
    var json: JSONValue { .string(self) }
}

extension Bool: JSONOutput {
    var json: JSONValue { .bool(self) }
}

extension Int: JSONOutput {
    var json: JSONValue { .number(Double(self)) }
}

extension Int64: JSONOutput {
    var json: JSONValue { .number(Double(self)) }
}

extension Double: JSONOutput {
    var json: JSONValue { .number(self) }
}

extension Optional: JSONOutput where Wrapped: JSONOutput {
    var json: JSONValue { self?.json ?? .null }
    var isAbsent: Bool { self == nil }
}

extension Array: JSONOutput where Element: JSONOutput {
    var json: JSONValue { .array(map(\.json)) }
}

extension Dictionary: JSONOutput where Key == String, Value: JSONOutput {
    var json: JSONValue { .object(mapValues(\.json)) }
}

extension JSONValue {
    /// An object of the `members` that have a value: absent optionals are left out.
    static func members(_ members: [String: any JSONOutput]) -> JSONValue {
        .object(members.compactMapValues { $0.isAbsent ? nil : $0.json })
    }
}

extension Encodable {
    /// The value as it encodes, for a command's `--json` output.
    var encodedJSON: JSONValue { (try? JSONValueEncoder().encode(self)) ?? .null }
}
