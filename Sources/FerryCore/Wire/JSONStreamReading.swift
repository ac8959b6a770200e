import Foundation

/// A sync message read straight from JSON text, without a tree: pushes and pulls carry thousands of records, and the
/// tree (a dictionary per object, hashed once to build and again to read) was the largest cost left in decoding
/// them (`ferry-benchmark` profiles, docs/benchmarks.md).
///
/// This is the messages' only reader. Its errors are those of any other decoding: a ``JSONParseError`` for text that
/// is not JSON, a `DecodingError` with the coding path (`mutations.3.op`) for JSON of the wrong shape.
package protocol JSONStreamReadable {
    init(stream parser: inout JSONTextParser) throws
}

extension JSONTextParser {
    /// `Value` read from the whole of `buffer`.
    static func read<Value: JSONStreamReadable>(_ type: Value.Type, from buffer: UnsafeBufferPointer<UInt8>) throws -> Value {
        var parser = JSONTextParser(bytes: buffer, maximumDepth: JSONValue.defaultMaximumDepth)
        let value = try Value(stream: &parser)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else { throw parser.invalid() }
        return value
    }

    // MARK: Errors
    //
    // Made where the problem is, with the path below the value being read; each object and array they leave
    // prefixes its key or index (``DecodingError/prefixed(by:)``), so reading pays nothing for paths until one fails.

    /// A value of the wrong JSON type here.
    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [], debugDescription: "Expected \(expected)."))
    }

    /// A value of the right type but not a valid one here (a UUID that is not one, an unknown case).
    func corrupted(_ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: description))
    }

    /// A required member absent from the object just read.
    func missing(_ key: String) -> DecodingError {
        .keyNotFound(WireKey(key), .init(codingPath: [], debugDescription: "No value for key '\(key)'."))
    }

    /// `value` when present, or the error for the required `key` the object just read lacked.
    func required<Value>(_ value: Value?, _ key: String) throws -> Value {
        guard let value else { throw missing(key) }
        return value
    }

    /// The next byte after whitespace, not consumed.
    mutating func peek() throws -> UInt8 {
        skipWhitespace()
        guard position < bytes.count else { throw invalid() }
        return bytes[position]
    }

    /// Reads an object, handing each key to `member`, which reads its value. A repeated key is handed over again
    /// (the last one wins, as in the tree).
    mutating func readObject(_ member: (inout JSONTextParser, String) throws -> Void) throws {
        guard try peek() == UInt8(ascii: "{") else { throw mismatch([String: JSONValue].self, "an object") }
        try enter()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return
        }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw invalid() }
            let key = try parseString()
            guard try peek() == UInt8(ascii: ":") else { throw invalid() }
            position += 1
            do {
                try member(&self, key)
            } catch let error as DecodingError {
                throw error.prefixed(by: WireKey(key))
            }
            switch try peek() {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                return
            default:
                throw invalid()
            }
        }
    }

    /// Reads an array, calling `item` to read each element.
    mutating func readArray(_ item: (inout JSONTextParser) throws -> Void) throws {
        guard try peek() == UInt8(ascii: "[") else { throw mismatch([JSONValue].self, "an array") }
        try enter()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return
        }
        var index = 0
        while true {
            do {
                try item(&self)
            } catch let error as DecodingError {
                throw error.prefixed(by: WireKey(index: index))
            }
            index += 1
            switch try peek() {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return
            default:
                throw invalid()
            }
        }
    }

    /// Whether the next value is `null`, which is then consumed.
    mutating func readNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        _ = try parseLiteral("null", .null)
        return true
    }

    mutating func readString() throws -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw mismatch(String.self, "a string") }
        return try parseString()
    }

    mutating func readBool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            _ = try parseLiteral("true", .bool(true))
            return true
        case UInt8(ascii: "f"):
            _ = try parseLiteral("false", .bool(false))
            return false
        default:
            throw mismatch(Bool.self, "true or false")
        }
    }

    /// A whole number within ±(2^53 − 1), as ``JSONValueDecoder`` reads integers.
    mutating func readInt64() throws -> Int64 {
        let byte = try peek()
        guard byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw mismatch(Int64.self, "a number") }
        let number = try parseNumber()
        guard abs(number) <= 9_007_199_254_740_991, let integer = Int64(exactly: number) else {
            throw corrupted("Expected a whole number within ±(2^53 − 1).")
        }
        return integer
    }

    mutating func readUUID() throws -> UUID {
        // Parsed from the bytes between the quotes: the 36-byte text was a heap string each time.
        if try peek() == UInt8(ascii: "\""), position + 37 < bytes.count, bytes[position + 37] == UInt8(ascii: "\""),
           let id = UUID.parse(UnsafeBufferPointer(rebasing: bytes[(position + 1)..<(position + 37)])) {
            position += 38
            return id
        }
        guard let id = UUID(wireText: try readString()) else { throw corrupted("Not a UUID.") }
        return id
    }

    /// An object of field values; `null` is none.
    mutating func readFields() throws -> [String: JSONValue] {
        if try readNull() { return [:] }
        // Room for a record's fields (one object per mutation or change): growing from one member rehashed them at
        // two, three and five.
        guard try peek() == UInt8(ascii: "{"), case .object(let members) = try parseObject(reserving: 6) else {
            throw mismatch([String: JSONValue].self, "an object of field values")
        }
        return members
    }

    /// An object of clocks; `null` is none. A clock without escapes is read from the bytes, with no string built, and
    /// one with the same bytes as the clock before it (most fields of a record share one) is that clock again.
    mutating func readClocks() throws -> [String: HLC] {
        var clocks: [String: HLC] = [:]
        if try readNull() { return clocks }
        var previous: ReadClock?
        try readObject { parser, field in
            let clock = try parser.readClock(after: previous)
            previous = clock
            clocks[field] = clock.clock
        }
        return clocks
    }

    /// ``readClocks()``, with the clocks' text as it was sent when its keys are distinct (so that parsing that text again
    /// gives the same clocks): a device stores a new record's clocks as that text, without writing them again.
    mutating func readClocksKeepingText() throws -> (clocks: [String: HLC], text: String?) {
        guard try peek() == UInt8(ascii: "{") else { return (try readClocks(), nil) }
        let start = position
        var pairs = 0
        var clocks: [String: HLC] = [:]
        var previous: ReadClock?
        try readObject { parser, field in
            let clock = try parser.readClock(after: previous)
            previous = clock
            clocks[field] = clock.clock
            pairs += 1
        }
        guard pairs == clocks.count else { return (clocks, nil) }
        return (clocks, String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
    }

    /// ``readClocks()``, with the clocks' text as it was sent when it is exactly what ``ClockMap/text(_:)`` writes for
    /// them: ASCII keys in strictly increasing order, no whitespace and no escape anywhere (so every clock was read in
    /// its one wire form).
    mutating func readClocksKeepingWrittenText() throws -> (clocks: [String: HLC], text: String?) {
        guard try peek() == UInt8(ascii: "{") else { return (try readClocks(), nil) }
        if depth < maximumDepth, let written = readWrittenClocks() { return written }
        let start = position
        var clocks: [String: HLC] = [:]
        var previous: ReadClock?
        var previousKey: String?
        var ordered = true
        try readObject { parser, field in
            let clock = try parser.readClock(after: previous)
            previous = clock
            clocks[field] = clock.clock
            if let previousKey, !(previousKey < field) { ordered = false }
            previousKey = field
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        let plain = text.allSatisfy { $0 > 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\\") }
        guard ordered, plain else { return (clocks, nil) }
        return (clocks, String(decoding: text, as: UTF8.self))
    }

    /// ``readClocksKeepingWrittenText()`` for text in exactly ``ClockMap/text(_:)``'s form, read in one pass over the
    /// bytes (the SDK sends its clocks so): `nil`, consuming nothing, for any other text, which the general reader then
    /// reads. Reading a push's clocks through the general reader was a twentieth of a push's CPU.
    private mutating func readWrittenClocks() -> (clocks: [String: HLC], text: String)? {
        let (start, count) = (position, bytes.count)
        let quote = UInt8(ascii: "\"")
        /// The end of the string whose text starts at `index` (its closing quote), when it holds only printable ASCII
        /// other than `\\`: the bytes a name or a clock is written in.
        func plainString(from index: Int) -> Int? {
            var end = index
            while end < count, bytes[end] != quote {
                guard bytes[end] > 0x20, bytes[end] < 0x80, bytes[end] != UInt8(ascii: "\\") else { return nil }
                end += 1
            }
            return end < count ? end : nil
        }
        var index = start + 1
        var clocks: [String: HLC] = [:]
        if index < count, bytes[index] == UInt8(ascii: "}") {
            position = index + 1
            return (clocks, "{}")
        }
        clocks.reserveCapacity(6)  // a record's fields, without growing (rehashing) on the way
        var previousKey: Range<Int>?
        var previous: (text: Range<Int>, clock: HLC)?
        while true {
            guard index < count, bytes[index] == quote, let keyEnd = plainString(from: index + 1) else { return nil }
            let key = (index + 1)..<keyEnd
            // ASCII in byte order is `String`'s order: keys strictly increasing, as ``ClockMap/text(_:)`` writes them.
            if let previousKey, !bytes[previousKey].lexicographicallyPrecedes(bytes[key]) { return nil }
            previousKey = key
            index = keyEnd + 1
            guard index + 1 < count, bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == quote,
                  let valueEnd = plainString(from: index + 2) else { return nil }
            let value = (index + 2)..<valueEnd
            let clock: HLC
            if let previous, previous.text.count == value.count,
               memcmp(bytes.baseAddress! + previous.text.lowerBound, bytes.baseAddress! + value.lowerBound, value.count) == 0 {
                clock = previous.clock
            } else {
                guard let parsed = HLC.parse(UnsafeBufferPointer(rebasing: bytes[value]), reusingNode: previous?.clock.node) else { return nil }
                clock = parsed
            }
            previous = (value, clock)
            clocks[String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self)] = clock
            index = valueEnd + 1
            guard index < count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            break
        }
        position = index
        return (clocks, String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    /// A clock read from the bytes between `start` and `end` (its text without the quotes), or from an escaped string.
    struct ReadClock {
        var clock: HLC
        var text: Range<Int>?
    }

    private mutating func readClock(after previous: ReadClock?) throws -> ReadClock {
        guard try peek() == UInt8(ascii: "\"") else { throw mismatch(String.self, "a clock string") }
        var end = position + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else {
            guard let clock = HLC(try parseString(), reusingNode: previous?.clock.node) else { throw corrupted("Not a clock.") }
            return ReadClock(clock: clock)
        }
        let text = (position + 1)..<end
        position = end + 1
        if let previous, let known = previous.text, known.count == text.count,
           memcmp(bytes.baseAddress! + known.lowerBound, bytes.baseAddress! + text.lowerBound, text.count) == 0 {
            return ReadClock(clock: previous.clock, text: text)
        }
        guard let clock = HLC.parse(UnsafeBufferPointer(rebasing: bytes[text]), reusingNode: previous?.clock.node) else {
            throw corrupted("Not a clock.")
        }
        return ReadClock(clock: clock, text: text)
    }

    /// A map keyed by space id (an object with UUID keys) of integers; `null` is none.
    mutating func readSpaceKeyed<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> [UUID: Integer] {
        var map: [UUID: Integer] = [:]
        if try readNull() { return map }
        try readObject { parser, key in
            guard let space = UUID(wireText: key) else { throw parser.corrupted("A key is not a space id.") }
            guard let value = Integer(exactly: try parser.readInt64()) else { throw parser.corrupted("Out of range.") }
            map[space] = value
        }
        return map
    }
}

extension DecodingError {
    /// The same error one level further down: `key` goes in front of its coding path.
    func prefixed(by key: any CodingKey) -> DecodingError {
        func moved(_ context: Context) -> Context {
            Context(codingPath: [key] + context.codingPath, debugDescription: context.debugDescription, underlyingError: context.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let context): return .typeMismatch(type, moved(context))
        case .valueNotFound(let type, let context): return .valueNotFound(type, moved(context))
        case .keyNotFound(let missing, let context): return .keyNotFound(missing, moved(context))
        case .dataCorrupted(let context): return .dataCorrupted(moved(context))
        @unknown default: return self
        }
    }
}
