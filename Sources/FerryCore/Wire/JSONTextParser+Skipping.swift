/// Skipping a value: what a reader does with a member it does not know, without building it.
extension JSONTextParser {
    /// A value of a key no reader knows, checked as JSON all the same (what ``parseValue()`` refuses, this refuses),
    /// but not built: no dictionary, array or string for what nobody reads.
    mutating func skipValue() throws {
        try startValue()
        switch bytes[position] {
        case UInt8(ascii: "{"): try skipContainer(closing: UInt8(ascii: "}"), keyed: true)
        case UInt8(ascii: "["): try skipContainer(closing: UInt8(ascii: "]"), keyed: false)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): _ = try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): _ = try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): _ = try parseLiteral("null", .null)
        default: _ = try parseNumber()
        }
    }

    private mutating func skipContainer(closing: UInt8, keyed: Bool) throws {
        try enter()
        skipWhitespace()
        if position < bytes.count, bytes[position] == closing {
            position += 1
            depth -= 1
            return
        }
        while true {
            if keyed {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw invalid() }
                try skipString()
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw invalid() }
                position += 1
            }
            try skipValue()
            skipWhitespace()
            guard position < bytes.count else { throw invalid() }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == closing {
                position += 1
                depth -= 1
                return
            } else {
                throw invalid()
            }
        }
    }

    /// A string, checked as ``parseString()`` checks it: a plain ASCII one is only scanned; one with an escape or a
    /// byte above ASCII is decoded (and validated) by it.
    private mutating func skipString() throws {
        let start = position
        position += 1  // the opening quote
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return
            }
            if byte < 0x20 { throw invalid() }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 {
                position = start
                _ = try parseString()
                return
            }
            position += 1
        }
        throw invalid()
    }
}
