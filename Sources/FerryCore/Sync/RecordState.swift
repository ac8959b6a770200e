/// A record's synced state: field values, one clock per field, and the tombstone flag with its own clock.
///
/// The server and every device merge with ``merge(_:)``, so all of them reach the same state from the
/// same changes in any order (docs/architecture.md, invariant 4).
public struct RecordState: Sendable, Hashable {
    /// The pseudo-field that carries the tombstone flag and its clock.
    public static let deletedKey = "_deleted"

    /// Field values (absent = never written).
    public var fields: [String: JSONValue]
    /// The clock of each written field; `_deleted` holds the clock of the latest delete or undelete.
    public var clocks: [String: HLC]
    /// Whether the record is a tombstone.
    public var isDeleted: Bool

    /// Creates a state.
    public init(fields: [String: JSONValue] = [:], clocks: [String: HLC] = [:], isDeleted: Bool = false) {
        self.fields = fields
        self.clocks = clocks
        self.isDeleted = isDeleted
    }

    /// Applies every field of `other` whose clock is later than this state's clock for that field.
    ///
    /// A field without a clock here loses to any clock. Equal clocks mean the same write, so nothing
    /// changes. The tombstone is merged like a field: an edit never undeletes, a later explicit undelete does.
    /// - Returns: whether anything changed.
    @discardableResult
    public mutating func merge(_ other: RecordState) -> Bool {
        if clocks.isEmpty, fields.isEmpty, takeWhole(other) { return !other.clocks.isEmpty }
        var changed = false
        for (name, clock) in other.clocks {
            if let mine = clocks[name], mine >= clock { continue }
            clocks[name] = clock
            if name == Self.deletedKey {
                isDeleted = other.isDeleted
            } else {
                fields[name] = other.fields[name] ?? .null
            }
            changed = true
        }
        return changed
    }

    /// Merges `other` into a state never written, as ``merge(_:)`` would, by taking its dictionaries whole (a new
    /// record, most of a push: no insert one by one into empty dictionaries). `false`, changing nothing, when `other`'s
    /// fields are not exactly its clocked ones; the field-by-field merge then does it.
    private mutating func takeWhole(_ other: RecordState) -> Bool {
        let deletedClock = other.clocks[Self.deletedKey] != nil
        guard other.fields.count == other.clocks.count - (deletedClock ? 1 : 0), other.fields[Self.deletedKey] == nil,
              other.fields.keys.allSatisfy({ other.clocks[$0] != nil })
        else { return false }
        clocks = other.clocks
        fields = other.fields
        if deletedClock { isDeleted = other.isDeleted }
        return true
    }

    /// The latest clock of any field, or `nil` for a state never written.
    public var latestClock: HLC? { clocks.values.max() }
}
