import FerryCore
import FerryTesting
import Foundation
import Testing

@Suite("JSON writing and encoding to the tree")
struct JSONWritingTests {
    static let values: [JSONValue] = [
        .null, .bool(true), .bool(false), .number(0), .number(-0.0), .number(42), .number(-7), .number(0.1), .number(-2.5e-8),
        .number(9_007_199_254_740_991), .number(1e300), .number(123_456.789),
        // Strings stored inline (up to 15 bytes) and on the heap, clean and with an escape at either end.
        .string(""), .string("a\"b"), .string("\nshort"), .string(String(repeating: "long and clean ", count: 20)),
        .string(String(repeating: "long ", count: 20) + "\u{1}"), .string("caf\u{e9} \"quoted\" \\ / \n\r\t\u{8}\u{c} \u{1} \u{1f} \u{7f} 😀 ☕"),
        .array([]), .object([:]),
        .object(["b": .array([.number(1), .null, .object(["z": .bool(true), "a": .string("x")])]), "a": .number(1), "é": .null]),
    ]

    @Test("writes text that JSONDecoder reads back as the same value", arguments: values)
    func roundTrips(_ value: JSONValue) throws {
        let text = value.jsonText
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == value, "\(text)")
        #expect(JSONValue(jsonText: text) == value)
    }

    @Test("counts the bytes it writes without writing them", arguments: values)
    func byteCount(_ value: JSONValue) {
        #expect(value.jsonByteCount == value.jsonText.utf8.count)
        #expect(JSONValue.array([value, value]).jsonByteCount == JSONValue.array([value, value]).jsonText.utf8.count)
    }

    @Test("an upper bound of the size never says a value fits a limit its JSON exceeds", arguments: values)
    func upperBound(_ value: JSONValue) {
        let extremes: [JSONValue] = [
            .number(-2.2250738585072014e-308), .number(-1.7976931348623157e308), .number(-Double.leastNonzeroMagnitude), .string("\u{1}\"\\\u{1F}"),
        ]
        for candidate in [value, .array([value] + extremes), .object(["k\u{2}": value, "n": .array(extremes)])] {
            let size = candidate.jsonByteCount
            for limit in [0, size / 2, size - 1] where limit >= 0 {
                #expect(!candidate.certainlyFitsJSONSize(limit), "\(candidate.jsonText) fits \(limit)")
            }
            #expect(candidate.certainlyFitsJSONSize(size * 6 + 200), "a limit far above the size is certain")
        }
    }

    @Test("writes what JSONEncoder writes with sorted keys and unescaped slashes (integers, strings, nesting)", arguments: values)
    func matchesJSONEncoder(_ value: JSONValue) throws {
        if case .number(let number) = value, number != number.rounded() || abs(number) >= 1e15 { return }  // spelled differently
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = String(decoding: try encoder.encode(value), as: UTF8.self)
        #expect(value.jsonText == expected.replacingOccurrences(of: "-0", with: "0"))
    }

    struct Sample: Codable, Equatable {
        var id: UUID
        var name: String
        var count: Int64
        var ratio: Double
        var tags: [String]
        var nested: [String: JSONValue]
        var optional: String?
        var bytes: Data
        var link: URL
        var flags: Set<Int>
    }

    @Test("encodes Codable types as JSONEncoder does, but for UUIDs in lowercase; the tree decoder reads them back")
    func codableRoundTrip() throws {
        let sample = Sample(
            id: UUID(), name: "Grace \"Church\"", count: 1_234_567_890_123, ratio: 0.25, tags: ["a", "b"],
            nested: ["x": .array([.number(1), .string("two")]), "y": .object(["deep": .null])], optional: nil,
            bytes: Data([0, 1, 2, 250]), link: URL(string: "https://example.com/a?b=c")!, flags: [3]
        )
        let ours = try JSONValueEncoder().encodeText(sample)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let foundation = String(decoding: try encoder.encode(sample), as: UTF8.self)
        #expect(String(decoding: ours, as: UTF8.self) == foundation.replacingOccurrences(of: sample.id.uuidString, with: sample.id.uuidString.lowercased()))
        #expect(try JSONValueDecoder().decode(Sample.self, from: ours) == sample)
        #expect(try JSONDecoder().decode(Sample.self, from: Data(ours)) == sample)
        #expect(!String(decoding: ours, as: UTF8.self).contains("optional"), "a nil optional is left out, as JSONEncoder does")
    }

    @Test("an object of many members and an array of many items encode in one pass")
    func large() throws {
        let members = Dictionary(uniqueKeysWithValues: (0..<20_000).map { ("k\($0)", $0) })
        let tree = try JSONValueEncoder().encode(members)
        #expect(tree.objectValue?.count == 20_000 && tree.objectValue?["k19999"] == .number(19_999))
        let items = try JSONValueEncoder().encode(Array(0..<50_000))
        #expect(JSONValue(jsonText: items.jsonText) == items)
    }
}

/// The word-at-a-time scan for bytes a JSON string escapes agrees with the byte-by-byte rule.
@Suite("JSON strings: the escape scan")
struct JSONEscapeScanTests {
    static func naive(_ bytes: [UInt8]) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    @Test("every byte value, at every position of strings from 0 to 19 bytes of clean filler")
    func everyByteEveryPosition() {
        for length in 0..<20 {
            for filler: UInt8 in [UInt8(ascii: "a"), 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xE9, 0xFF] {
                for position in 0..<max(length, 1) {
                    for byte in UInt8.min...UInt8.max {
                        var text = [UInt8](repeating: filler, count: length)
                        if length > 0 { text[position] = byte }
                        let scanned = text.withUnsafeBufferPointer { JSONValue.needsEscape($0) }
                        if scanned != Self.naive(text) {
                            Issue.record("length \(length), filler \(filler), byte \(byte) at \(position): scan says \(scanned)")
                            return
                        }
                    }
                }
            }
        }
    }

    @Test("random strings, mostly clean, agree with the byte-by-byte rule and write the same JSON as a String does")
    func randomStrings() throws {
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<5000 {
            let length = Int(random.next() % 64)
            let text = (0..<length).map { _ in
                random.next() % 16 == 0 ? UInt8(truncatingIfNeeded: random.next() % 0x60) : UInt8(truncatingIfNeeded: 0x20 + random.next() % 0x5F)
            }
            #expect(text.withUnsafeBufferPointer { JSONValue.needsEscape($0) } == Self.naive(text))
            var written: [UInt8] = []
            text.withUnsafeBufferPointer { JSONValue.write(utf8: $0, into: &written) }
            let decoded = try JSONDecoder().decode(String.self, from: Data(written))
            #expect(Array(decoded.utf8) == text)
        }
    }
}
