import Foundation

/// The row form of a change's clocks (``ClockForm/row``): `clock`, the clock of every field in `fields` without an
/// entry in `clocks`, and `clocks` for the rest. Written by the server from a record's stored clocks text, read by
/// every decoder through ``expanding(_:rowClock:fields:)``, so both sides agree on one rule.
extension ClockMap {
    /// The full clocks of a change sent in the row form: `clocks`, plus `rowClock` for each field of `fields` that has
    /// no entry there. Without a `rowClock` (the field form), `clocks` as they are.
    public static func expanding(_ clocks: [String: HLC], rowClock: HLC?, fields: [String: JSONValue]) -> [String: HLC] {
        guard let rowClock else { return clocks }
        var all = clocks
        all.reserveCapacity(fields.count + clocks.count)
        for name in fields.keys where all[name] == nil {
            all[name] = rowClock
        }
        return all
    }

    /// The flat text of ``expanding(_:rowClock:fields:)``, built from the texts that came on the wire: `rowClock` (a
    /// clock's wire form, checked by the caller) and `exceptions`, the `clocks` object's text as sent (its keys
    /// distinct), or `nil` when it was absent. A device stores a new record's clocks as this text.
    static func rowFormText(rowClock: String, exceptions: String?, exceptionKeys: [String: HLC], fields: [String: JSONValue]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + (fields.count + exceptionKeys.count) * (rowClock.utf8.count + 24) + (exceptions?.utf8.count ?? 0))
        for name in fields.keys where exceptionKeys[name] == nil {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendQuoted(rowClock, to: &bytes)
        }
        if let exceptions, !exceptionKeys.isEmpty {
            // `{…}` of the exceptions, without its braces (and without the space PostgreSQL's output may put after `{`).
            let inner = exceptions.utf8.dropFirst().dropLast().drop(while: { $0 == UInt8(ascii: " ") })
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: inner)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes the members `"clock"` and, when some clocks differ from it, `"clocks"` of the row form of a change with
    /// `fields` whose clocks are `text` (flat form, distinct keys, every value a clock: ``wireText(_:)``). `clock` is
    /// the clock most fields share. Returns `false`, writing nothing, when the row form cannot say these clocks: a
    /// field without a clock, no field at all, or text not in the flat form; the caller writes the field form.
    package static func writeRowForm(_ text: String, fields: [String: JSONValue], into object: inout JSONObjectWriter, _ bytes: inout [UInt8]) -> Bool {
        guard !fields.isEmpty else { return false }
        var text = text
        return text.withUTF8 { buffer in
            var pairs: [ClockPair] = []
            pairs.reserveCapacity(fields.count + 1)
            guard walkFlat(buffer, { key, value in
                pairs.append(ClockPair(key: key, value: value))
                return true
            }) == .complete else { return false }
            for name in fields.keys {
                let found: Int?? = name.utf8.withContiguousStorageIfAvailable { name in
                    pairs.firstIndex { same($0.key, name[...]) }
                }
                guard let index = found ?? nil else { return false }
                pairs[index].isField = true
            }
            return writeRowForm(pairs, into: &object, &bytes)
        }
    }

    /// One key and value of a flat clock text, and whether the key names a field the change carries.
    package struct ClockPair {
        package var key: Bytes
        package var value: Bytes
        package var isField = false
    }

    /// The pairs of a clock text that a pull reply may carry as it is (``wireText(_:)``'s rule: flat form, distinct
    /// keys, every value a clock's wire form), none marked as a field; `nil` for any other text.
    package static func wirePairs(_ buffer: UnsafeBufferPointer<UInt8>, capacity: Int) -> [ClockPair]? {
        var pairs: [ClockPair] = []
        pairs.reserveCapacity(capacity)
        let walk = walkFlat(buffer) { key, value in
            // Most fields share one clock: a value the pair before holds was checked already.
            let checked = pairs.last.map { same($0.value, value) } ?? false
            guard checked || HLC.isWireForm(UnsafeBufferPointer(rebasing: value)), !pairs.contains(where: { same($0.key, key) }) else { return false }
            pairs.append(ClockPair(key: key, value: value))
            return true
        }
        return walk == .complete ? pairs : nil
    }

    /// The row form of `pairs`, whose fields are marked: `false`, writing nothing, when no pair is a field (a field
    /// without a clock is the caller's to refuse).
    package static func writeRowForm(_ pairs: [ClockPair], into object: inout JSONObjectWriter, _ bytes: inout [UInt8]) -> Bool {
        guard let rowClock = mostShared(pairs) else { return false }
        object.key("clock", &bytes)
        appendQuoted(rowClock, &bytes)
        if pairs.contains(where: { isException($0, rowClock) }) {
            object.key("clocks", &bytes)
            writeExceptions(pairs, rowClock: rowClock, into: &bytes)
        }
        return true
    }

    /// The row form of `pairs` as two values of a row of the rows layout: the row clock and its exceptions (or
    /// `null`). `false`, writing nothing, when no pair is a field.
    package static func writeRowFormValues(_ pairs: [ClockPair], into bytes: inout [UInt8]) -> Bool {
        guard let rowClock = mostShared(pairs) else { return false }
        appendQuoted(rowClock, &bytes)
        bytes.append(UInt8(ascii: ","))
        if pairs.contains(where: { isException($0, rowClock) }) {
            writeExceptions(pairs, rowClock: rowClock, into: &bytes)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
        return true
    }

    /// Whether `pair` goes in `clocks` beside `rowClock`: it is not a field's, or not that clock.
    private static func isException(_ pair: ClockPair, _ rowClock: Bytes) -> Bool {
        !pair.isField || !same(pair.value, rowClock)
    }

    /// The object of every pair.
    package static func writeObject(_ pairs: [ClockPair], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, pair) in pairs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(pair.key, &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendQuoted(pair.value, &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The object of the pairs that are exceptions to `rowClock`.
    private static func writeExceptions(_ pairs: [ClockPair], rowClock: Bytes, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for pair in pairs where isException(pair, rowClock) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            appendQuoted(pair.key, &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendQuoted(pair.value, &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Whether `key` is `name`'s bytes.
    package static func same(_ key: Bytes, _ name: [UInt8]) -> Bool {
        key.count == name.count && name.withUnsafeBufferPointer { same(key, $0[...]) }
    }

    package typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    /// The clock most fields hold (a record written whole by one device: all of them, found in one pass).
    private static func mostShared(_ pairs: [ClockPair]) -> Bytes? {
        guard let first = pairs.first(where: \.isField)?.value else { return nil }
        if pairs.allSatisfy({ !$0.isField || same($0.value, first) }) { return first }
        var (best, count) = (first, 0)
        for pair in pairs where pair.isField {
            let shared = pairs.reduce(0) { $0 + ($1.isField && same($1.value, pair.value) ? 1 : 0) }
            if shared > count { (best, count) = (pair.value, shared) }
        }
        return best
    }

    package static func same(_ left: Bytes, _ right: Bytes) -> Bool {
        // The first bytes tell most keys apart without a call to memcmp.
        left.count == right.count
            && (left.isEmpty || left.first == right.first
                && memcmp(left.base.baseAddress! + left.startIndex, right.base.baseAddress! + right.startIndex, left.count) == 0)
    }

    package static func appendQuoted(_ slice: Bytes, _ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: slice))
        bytes.append(UInt8(ascii: "\""))
    }
}
