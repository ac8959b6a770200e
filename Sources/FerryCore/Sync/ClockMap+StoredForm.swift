import Foundation

/// The stored form of a record's clocks: the server's `_clocks` column since 2026-11-27.
///
/// It is the flat text of ``ClockMap/text(_:)`` whose key `*` (``rowClockKey``), when present, is the **row clock**: the
/// clock of every field that holds a value and has no key of its own. A field without a value (cleared) and `_deleted`
/// always keep their own key, so the row clock never gives a clock to a field that has none. Most records are written
/// whole by one device, and their clocks are then `{"*":"<clock>"}`: 64 bytes, where one clock per field took 343 for
/// five fields (more than half of each row a pull reads). The row clock covers exactly what the pull's row form calls
/// `clock`, so a pull copies it as it is (``ChangeRowWriter``). Text without `*` (what Ferry wrote before) reads as it
/// always did.
extension ClockMap {
    /// The key of the row clock; no field can have this name (``Identifier``).
    public static let rowClockKey = "*"

    /// The stored text of a record's `clocks`, whose fields are `fields`: a row clock for the clock most of the fields
    /// with a value share (ties to the earliest), and a key for every other clock. The flat form when a field with a
    /// value has no clock (a field added to the schema after the record was written) or no field has a value.
    public static func storedText(_ clocks: [String: HLC], fields: [String: JSONValue]) -> String {
        if let rowClock = soleClock(clocks, fields: fields) {
            // The common case, written without sorting or a dictionary: every push of a new record comes here.
            var bytes = Array(#"{"*":""#.utf8)
            bytes.reserveCapacity(72)
            if needsEscapes(rowClock.node) {
                bytes.removeLast()
                appendQuoted(rowClock.description, to: &bytes)
            } else {
                rowClock.write(into: &bytes)
                bytes.append(UInt8(ascii: "\""))
            }
            bytes.append(UInt8(ascii: "}"))
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let rowClock = storedRowClock(clocks, fields: fields) else { return text(clocks) }
        var kept = clocks.filter { name, clock in clock != rowClock || (fields[name]?.isNull ?? true) }
        kept[rowClockKey] = rowClock
        return text(kept)
    }

    /// The clocks of a record read from its stored text: `clocks` (as parsed from it) with the row clock given to every
    /// field of `fields` that holds a value and has no clock of its own, and the row clock's key gone. Clocks without
    /// a row clock come back as they are.
    public static func expandingStored(_ clocks: [String: HLC], fields: [String: JSONValue]) -> [String: HLC] {
        guard let rowClock = clocks[rowClockKey] else { return clocks }
        var all = clocks
        all[rowClockKey] = nil
        for (name, value) in fields where !value.isNull && all[name] == nil {
            all[name] = rowClock
        }
        return all
    }

    /// The one clock of a record written whole by one device: every clock is a field's with a value (so, as many
    /// clocks as fields, every field has one), and all are the same. `nil` otherwise.
    private static func soleClock(_ clocks: [String: HLC], fields: [String: JSONValue]) -> HLC? {
        guard let first = clocks.first?.value, clocks.count == fields.count else { return nil }
        for (name, clock) in clocks {
            guard clock == first, let value = fields[name], !value.isNull else { return nil }
        }
        return first
    }

    private static func storedRowClock(_ clocks: [String: HLC], fields: [String: JSONValue]) -> HLC? {
        var counts: [HLC: Int] = [:]
        for (name, value) in fields where !value.isNull {
            guard let clock = clocks[name] else { return nil }
            counts[clock, default: 0] += 1
        }
        return counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// Whether `key`, a key of a flat clock text, is the row clock's.
    package static func isRowClockKey(_ key: Bytes) -> Bool {
        key.count == 1 && key.first == UInt8(ascii: "*")
    }
}
