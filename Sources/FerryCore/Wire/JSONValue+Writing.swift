extension JSONValue {
    /// Compact JSON text of this value, keys sorted, `/` not escaped (the form `JSONEncoder` writes with
    /// `[.sortedKeys, .withoutEscapingSlashes]`; numbers that are not integers may be spelled differently).
    public var jsonText: String {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses JSON text (any value, including bare strings and numbers); `nil` when it is not JSON.
    public init?(jsonText: String) {
        var text = jsonText
        guard let value = text.withUTF8({ try? JSONValue(parsing: $0) }) else { return nil }
        self = value
    }

    /// Appends this value's compact JSON text to `bytes`, keys sorted.
    ///
    /// One pass, no intermediate objects: replies of thousands of records are written here rather than through
    /// `JSONEncoder`, which boxes every value on Linux. A number that is not finite (never parsed from JSON, so only
    /// built in code) is written as `null`.
    public func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: Self.nullBytes)
        case .bool(let flag): bytes.append(contentsOf: flag ? Self.trueBytes : Self.falseBytes)
        case .number(let number): Self.write(number, into: &bytes)
        case .string(let text): Self.write(text, into: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                item.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.write(member.key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// The number of bytes ``write(into:)`` writes, counted without writing them (record size limits).
    public var jsonByteCount: Int {
        switch self {
        case .null, .bool(true): return 4
        case .bool(false): return 5
        case .number(let number):
            var bytes: [UInt8] = []
            Self.write(number, into: &bytes)
            return bytes.count
        case .string(let text): return Self.jsonByteCount(text)
        case .array(let items): return items.reduce(1 + max(items.count, 1)) { $0 + $1.jsonByteCount }
        case .object(let members):
            return members.reduce(1 + max(members.count, 1)) { $0 + Self.jsonByteCount($1.key) + 1 + $1.value.jsonByteCount }
        }
    }

    private static func jsonByteCount(_ text: String) -> Int {
        var count = 2
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }

    /// A JSON number: integers within ±2^53 without a fraction, as `JSONEncoder` writes them; others in Swift's
    /// shortest form that reads back as the same `Double`.
    public static func write(_ number: Double, into bytes: inout [UInt8]) {
        guard number.isFinite else {
            bytes.append(contentsOf: nullBytes)
            return
        }
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 {
            write(Int64(number), into: &bytes)
        } else {
            bytes.append(contentsOf: number.description.utf8)
        }
    }

    /// An integer's decimal digits, written without making a `String` (every number of every row comes here).
    private static func write(_ integer: Int64, into bytes: inout [UInt8]) {
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = integer.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 19 digits of any Int64
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\n`-style or `\u00XX` escapes, the rest as is.
    public static func write(_ text: String, into bytes: inout [UInt8]) {
        // Scanned and copied as one buffer: through `String.UTF8View` each byte cost a call (a tenth of a pull reply).
        let written: Void? = text.utf8.withContiguousStorageIfAvailable { write(utf8: $0, into: &bytes) }
        if written == nil {
            var text = text
            text.withUTF8 { write(utf8: $0, into: &bytes) }
        }
    }

    /// Whether `text` holds a byte a JSON string escapes: a control character, `"` or `\`. Eight bytes at a time: a
    /// pull writes every text value of every row through here.
    package static func needsEscape(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = text.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while index + 8 <= text.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // Each term has a high bit set exactly when some byte is below 0x20, or is zero after the xor (the
            // word-at-a-time "has less" and "has zero" tests); bytes of 0x80 and above never set one.
            let found = ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
            if found & highs != 0 { return true }
            index += 8
        }
        while index < text.count {
            let byte = base[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    /// A JSON string of `text`, valid UTF-8 (a database's text column), written as a `String` holding it is.
    public static func write(utf8 text: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole, not byte by byte.
        if !needsEscape(text) {
            bytes.append(contentsOf: text)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let nullBytes = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)
}
