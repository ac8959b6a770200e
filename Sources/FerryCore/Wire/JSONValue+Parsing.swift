/// Why JSON text could not be parsed.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The text is not JSON (or not UTF-8).
        case invalid
        /// Arrays and objects nest deeper than allowed.
        case tooDeep(limit: Int)
    }

    /// What went wrong.
    public var reason: Reason
    /// The byte offset where it went wrong.
    public var offset: Int

    /// Creates the error.
    public init(reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        switch reason {
        case .invalid: "not valid JSON (at byte \(offset))"
        case .tooDeep(let limit): "nested deeper than \(limit) levels (at byte \(offset))"
        }
    }
}

extension JSONValue {
    /// The deepest nesting of arrays and objects ``init(parsing:maximumDepth:)`` accepts by default.
    public static let defaultMaximumDepth = 64

    /// Parses UTF-8 JSON text in one linear pass, refusing nesting deeper than `maximumDepth`.
    ///
    /// Unlike `JSONDecoder` with ``init(from:)``, which tries each kind of value in turn and builds an error per
    /// failed try, this costs a few operations per byte: a megabytes-long `[{},{},…]` is cheap to refuse.
    /// Long inputs check for cancellation now and then, so a request past its deadline stops parsing.
    public init(parsing bytes: some Collection<UInt8>, maximumDepth: Int = JSONValue.defaultMaximumDepth) throws {
        let parse = { (buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue in
            var parser = JSONTextParser(bytes: buffer, maximumDepth: maximumDepth)
            return try parser.parseDocument()
        }
        if let value = try bytes.withContiguousStorageIfAvailable(parse) {
            self = value
        } else {
            self = try Array(bytes).withUnsafeBufferPointer(parse)
        }
    }
}

/// A recursive-descent parser over UTF-8 bytes (RFC 8259), bounded in depth. `JSONStreamReading.swift` reads the
/// sync messages with it directly, without a tree.
package struct JSONTextParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var position = 0
    var depth = 0
    /// Values parsed since the last cancellation check.
    var sinceCheck = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw invalid() }
        return value
    }

    func invalid() -> JSONParseError { JSONParseError(reason: .invalid, offset: position) }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws -> JSONValue {
        try startValue()
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        default: return .number(try parseNumber())
        }
    }

    /// Counts a value (every 65,536th checks the task's cancellation, so a huge body stops with its request) and
    /// moves to its first byte.
    mutating func startValue() throws {
        sinceCheck += 1
        if sinceCheck >= 65_536 {
            sinceCheck = 0
            try Task.checkCancellation()
        }
        skipWhitespace()
        guard position < bytes.count else { throw invalid() }
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= maximumDepth else { throw JSONParseError(reason: .tooDeep(limit: maximumDepth), offset: position) }
        position += 1
    }

    /// An object; `reserving` members' room up front (a record's fields, whose count is known to be a few), which
    /// nested objects do not get: a body of millions of tiny objects must not cost a record's room each.
    mutating func parseObject(reserving capacity: Int = 0) throws -> JSONValue {
        try enter()
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(members)
        }
        if capacity > 0 { members.reserveCapacity(capacity) }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw invalid() }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw invalid() }
            position += 1
            members[key] = try parseValue()
            skipWhitespace()
            guard position < bytes.count else { throw invalid() }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                depth -= 1
                return .object(members)
            } else {
                throw invalid()
            }
        }
    }

    private mutating func parseArray() throws -> JSONValue {
        try enter()
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(items)
        }
        while true {
            items.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw invalid() }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                depth -= 1
                return .array(items)
            } else {
                throw invalid()
            }
        }
    }

    mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw invalid() }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[position + $0] == expected[$0] }
        }
        guard matches else { throw invalid() }
        position += count
        return value
    }

    /// A number per the JSON grammar (no leading zeros, no `+`, no bare `.`), as a `Double`.
    mutating func parseNumber() throws -> Double {
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - first
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw invalid() }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw invalid() }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw invalid() }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw JSONParseError(reason: .invalid, offset: start) }
        return number
    }

    /// A string's contents: plain runs are copied as they are, escapes decoded; invalid UTF-8 is refused.
    mutating func parseString() throws -> String {
        position += 1  // the opening quote
        var runStart = position
        var decoded: [UInt8]?
        var highBits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                position += 1
                // ASCII needs no validation; `String(validating:)` is generic and looked up its metadata per call
                // (two thirds of its cost).
                if decoded == nil, highBits < 0x80 { return String(decoding: run, as: UTF8.self) }
                if decoded == nil, let text = String(validating: run, as: UTF8.self) { return text }
                guard decoded != nil else { throw invalid() }
                decoded!.append(contentsOf: run)
                guard let text = String(validating: decoded!, as: UTF8.self) else { throw invalid() }
                return text
            }
            if byte < 0x20 { throw invalid() }
            if byte == UInt8(ascii: "\\") {
                if decoded == nil { decoded = [] }
                decoded!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                position += 1
                try appendEscape(to: &decoded!)
                runStart = position
                continue
            }
            highBits |= byte
            position += 1
        }
        throw invalid()
    }

    private mutating func appendEscape(to output: inout [UInt8]) throws {
        guard position < bytes.count else { throw invalid() }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(byte)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw invalid()
                }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw invalid() }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw invalid() }
            output.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw invalid()
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw invalid() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw invalid()
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
