import Foundation

/// The text form of a record's field clocks, `{"field":"<clock>",…}` with keys in code-point order: what the
/// stores keep in their clock columns (`_clocks` on the server and the device, `clocks` in the device's outbox).
///
/// Written and read without JSONEncoder and JSONDecoder: every row a sync pushes, pulls or applies goes through
/// here, and the general coders were the largest cost left in `ferry-benchmark`'s profile. The fast path reads
/// what it writes; anything else that is valid JSON (escapes, whitespace) goes through the full parser, so text from
/// older versions or other writers still reads.
public enum ClockMap {
    /// The text of `clocks`.
    public static func text(_ clocks: [String: HLC]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + clocks.count * 64)
        write(clocks, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the JSON object of field name to clock, keys sorted, to `bytes`: the `_clocks` column, and the
    /// `clocks` of pushed and pulled records.
    public static func write(_ clocks: [String: HLC], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        // Most fields of a record share one clock: its quoted text is made once and copied for the others.
        var last: (clock: HLC, quoted: [UInt8])?
        for (index, (field, clock)) in clocks.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(field, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if let last, last.clock == clock {
                bytes.append(contentsOf: last.quoted)
                continue
            }
            let start = bytes.count
            if needsEscapes(clock.node) {
                appendQuoted(clock.description, to: &bytes)
            } else {
                bytes.append(UInt8(ascii: "\""))
                clock.write(into: &bytes)
                bytes.append(UInt8(ascii: "\""))
            }
            last = (clock, Array(bytes[start...]))
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The clocks in `text`; `nil` when it is not a JSON object whose every value is a clock.
    public static func clocks(fromText text: String) -> [String: HLC]? {
        var text = text
        switch text.withUTF8(parseFlat) {
        case .parsed(let clocks): return clocks
        case .invalid: return nil
        case .unsure: break
        }
        guard let members = JSONValue(jsonText: text)?.objectValue else { return nil }
        var clocks: [String: HLC] = [:]
        for (field, value) in members {
            guard let clock = value.stringValue.flatMap(HLC.init) else { return nil }
            clocks[field] = clock
        }
        return clocks
    }

    private enum FastParse {
        case parsed([String: HLC])
        case invalid
        /// Not the form ``text(_:)`` writes (an escape, whitespace): the full parser decides.
        case unsure
    }

    /// Reads the form ``text(_:)`` writes: `{`, then `"key":"value"` pairs joined by `,`, then `}`; also with the spaces
    /// after `:` and `,` of PostgreSQL's `jsonb` output, which the server's `_clocks` column reads back as.
    private static func parseFlat(_ bytes: UnsafeBufferPointer<UInt8>) -> FastParse {
        var clocks: [String: HLC] = [:]
        var node: String?
        let walk = walkFlat(bytes) { key, value in
            guard let clock = HLC.parse(UnsafeBufferPointer(rebasing: value), reusingNode: node) else { return false }
            node = clock.node
            clocks[String(decoding: key, as: UTF8.self)] = clock
            return true
        }
        return switch walk {
        case .complete: .parsed(clocks)
        case .refused: .invalid
        case .otherForm: .unsure
        }
    }

    /// `text` when a pull reply may carry it as it is, without parsing it and writing it again: a JSON object in the
    /// form ``parseFlat(_:)`` reads whose keys are distinct and whose values are all clocks, without a row clock
    /// (``rowClockKey``, which only the stored form has). `nil` otherwise.
    public static func wireText(_ text: String) -> String? {
        var text = text
        let accepted = text.withUTF8 { buffer in
            wirePairs(buffer, capacity: 8).map { pairs in !pairs.contains { isRowClockKey($0.key) } } ?? false
        }
        return accepted ? text : nil
    }

    /// Hands each key and clock of `text`, a text ``text(_:)`` wrote (``Mutation/receivedClocksText``), to `visit` as
    /// their bytes, in order, in one pass; returns how many there were, or `nil` when `text` turns out not to be in that
    /// form, and the caller then drops what it was handed. So a digest reads a request's clocks as they came, without
    /// sorting them again.
    package static func forEachWrittenPair(
        in text: String, _ visit: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void
    ) -> Int? {
        var text = text
        return text.withUTF8 { bytes in
            var count = 0
            let walk = walkFlat(bytes) { key, value in
                visit(UnsafeBufferPointer(rebasing: key), UnsafeBufferPointer(rebasing: value))
                count += 1
                return true
            }
            return walk == .complete ? count : nil
        }
    }

    /// Whether `field` has a clock in `text`, which ``wireText(_:)`` accepted (so `"<field>":` can only be a key).
    public static func hasClock(_ field: String, inWireText text: String) -> Bool {
        var pattern = "\"\(field)\""
        var text = text
        return text.withUTF8 { bytes in
            pattern.withUTF8 { needle in
                guard needle.count < bytes.count else { return false }
                var start = 0
                while start + needle.count < bytes.count {
                    if bytes[start] == needle[0], UnsafeBufferPointer(rebasing: bytes[start..<start + needle.count]).elementsEqual(needle),
                       bytes[start + needle.count] == UInt8(ascii: ":") {
                        return true
                    }
                    start += 1
                }
                return false
            }
        }
    }

    enum Walk {
        case complete
        /// `visit` refused a pair.
        case refused
        /// Not the flat form: an escape, other whitespace, a value that is not a string.
        case otherForm
    }

    /// Hands each key and value of the flat form (see ``parseFlat(_:)``) to `visit`, in order, until it refuses one.
    static func walkFlat(
        _ bytes: UnsafeBufferPointer<UInt8>, _ visit: (Slice<UnsafeBufferPointer<UInt8>>, Slice<UnsafeBufferPointer<UInt8>>) -> Bool
    ) -> Walk {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return .otherForm }
        if bytes.count == 2 { return .complete }
        var index = 1
        var previous: Slice<UnsafeBufferPointer<UInt8>>?
        while true {
            guard let key = quoted(bytes, &index), index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return .otherForm }
            index += 1
            skipSpace(bytes, &index)
            guard let value = repeated(previous, in: bytes, &index) ?? quoted(bytes, &index), index < bytes.count else { return .otherForm }
            previous = value
            guard visit(key, value) else { return .refused }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                skipSpace(bytes, &index)
            case UInt8(ascii: "}"): return index == bytes.count - 1 ? .complete : .otherForm
            default: return .otherForm
            }
        }
    }

    private static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        if index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
    }

    /// `previous` again if the string at `index` is the same bytes (one compare: most fields share one clock), moving
    /// `index` past it; `nil` otherwise. `previous` came from ``quoted(_:_:)``, so it holds no quote or escape.
    private static func repeated(
        _ previous: Slice<UnsafeBufferPointer<UInt8>>?, in bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int
    ) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let previous, index + previous.count + 1 < bytes.count, bytes[index] == UInt8(ascii: "\""),
              bytes[index + previous.count + 1] == UInt8(ascii: "\""),
              memcmp(bytes.baseAddress! + index + 1, previous.base.baseAddress! + previous.startIndex, previous.count) == 0
        else { return nil }
        let start = index + 1
        index = start + previous.count + 1
        return bytes[start..<start + previous.count]
    }

    /// The bytes between a `"` at `index` and the next `"`, moving `index` past it; `nil` for anything else.
    private static func quoted(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                index = end + 1
                return bytes[start..<end]
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            end += 1
        }
        return nil
    }

    static func needsEscapes(_ string: String) -> Bool {
        string.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 })
    }

    static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        if needsEscapes(string) {
            JSONValue.write(string, into: &bytes)
        } else {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: string.utf8)
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
