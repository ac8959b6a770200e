import FerryCore
import Foundation

/// The `_clocks` column: a JSON object of field name to clock, in the stored form (a row clock for the fields that share
/// it, ``ClockMap/storedText(_:fields:)``).
enum ClockCoding {
    /// The column of a record whose state is `state`.
    static func encode(_ state: RecordState) -> String {
        ClockMap.storedText(state.clocks, fields: state.fields)
    }

    /// Decodes the column; entries that are not clocks are dropped (they can only come from outside Ferry).
    static func decode(_ text: String) -> [String: HLC] {
        if let clocks = ClockMap.clocks(fromText: text) { return clocks }
        guard case .object(let members)? = JSONValue(jsonText: text) else { return [:] }
        return members.compactMapValues { $0.stringValue.flatMap(HLC.init) }
    }
}

/// A record's `_clocks` column as a reader needs it: parsed for merging, or kept as text for a pull reply when
/// ``ClockMap/wireText(_:)`` accepts it (parsed otherwise, which drops what is not a clock).
struct ClockColumn {
    /// The clocks, unless kept as text.
    var parsed: [String: HLC] = [:]
    /// The column as it is, for the wire.
    var wireText: String?

    init(_ text: String, forWire: Bool) {
        if forWire, let wireText = ClockMap.wireText(text) {
            self.wireText = wireText
        } else {
            parsed = ClockCoding.decode(text)
        }
    }

    /// Whether `field` has a clock of its own: a field without one and without a value was never written, and is left
    /// out (a row clock covers only fields with a value).
    func hasClock(_ field: String) -> Bool {
        if let wireText { return ClockMap.hasClock(field, inWireText: wireText) }
        return parsed[field] != nil
    }

    /// The state of a record whose `fields` (read from their columns, a field without a value only when it has a
    /// clock), tombstone and `_sealed` column were read beside this column: the sealed values back among the fields,
    /// then the row clock given to the fields it covers.
    func state(fields: [String: JSONValue], isDeleted: Bool, sealed: String?, in collection: CollectionDefinition) -> RecordState {
        var state = RecordState(fields: fields, clocks: parsed, isDeleted: isDeleted)
        state.unseal(sealed.flatMap(JSONValue.init(jsonText:)), in: collection)
        state.clocks = ClockMap.expandingStored(state.clocks, fields: state.fields)
        return state
    }
}

extension HLC {
    /// The clock of a write the server makes itself (`PATCH /sync/v1/profile`): its wall time, node `server`.
    static func server(_ now: Date) -> HLC {
        HLC(milliseconds: Int64((now.timeIntervalSince1970 * 1000).rounded(.down)), counter: 0, node: "server")
    }
}
