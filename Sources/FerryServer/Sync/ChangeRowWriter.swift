import FerryCore
import Foundation

/// Writes a pull reply's changes straight from a store's row, without building a ``Change`` first: the server's
/// pull, where filling each change's field dictionary and then writing it out were half of its time.
///
/// In the ``PullLayout/changes`` layout it writes, byte for byte, what ``Change``'s own writer gives for the same
/// row; in the ``PullLayout/rows`` layout, one row of ``rowColumns`` (`ChangeRowWriterTests` holds both to it). Clocks
/// stored with a row clock (``ClockMap/storedText(_:fields:)``) are written as they are stored: the change reads back
/// the same, though its row form may pick another `clock` than ``Change``'s writer would. A row whose clocks are not in
/// the flat form with distinct keys and clocks for values is refused, and the caller builds a ``Change`` for it.
struct ChangeRowWriter: Sendable {
    /// How the clocks are spelled (the form the pull asked for).
    let clockForm: ClockForm
    /// How each change is laid out.
    let layout: PullLayout
    /// The collection whose rows this writes.
    let collection: String
    /// The names of the values of a row of the rows layout: `id`, `seq`, `deleted`, `clock`, `clocks`, then the
    /// fields in the order the store's columns list them.
    let rowColumns: [String]
    /// About how many bytes a page of the rows layout spends before its rows (space, collection, columns); 0 in the
    /// changes layout. A reply's byte budget counts it once per page.
    let pageHeaderBytes: Int
    /// `"collection":"<name>","deleted":`, the same for every change.
    private let collectionMember: [UInt8]
    /// The fields as the store's columns list them: each one's name and its `"name":` member key.
    private let names: [[UInt8]]
    private let memberKeys: [[UInt8]]
    /// Column indices in the order a change's `fields` object lists them (code-point order, as ``JSONValue`` sorts keys).
    private let written: [Int]

    /// The first values of every row of the rows layout, before the fields.
    static let rowSyncColumns = ["id", "seq", "deleted", "clock", "clocks"]

    /// A writer for rows of `collection` whose field columns are `fields`, in that order.
    init(collection: String, fields: [String], clockForm: ClockForm, layout: PullLayout = .changes) {
        self.clockForm = clockForm
        self.layout = layout
        self.collection = collection
        rowColumns = Self.rowSyncColumns + fields
        pageHeaderBytes = layout == .rows ? rowColumns.reduce(96 + collection.utf8.count) { $0 + $1.utf8.count + 3 } : 0
        var member: [UInt8] = []
        JSONValue.write(collection, into: &member)
        collectionMember = Array("\"collection\":".utf8) + member + Array(",\"deleted\":".utf8)
        names = fields.map { Array($0.utf8) }
        memberKeys = fields.map { name in
            var key: [UInt8] = []
            JSONValue.write(name, into: &key)
            return key + [UInt8(ascii: ":")]
        }
        written = fields.indices.sorted { fields[$0] < fields[$1] }
    }

    /// Appends the change of one row to `bytes`: the field at column `index` holds no value when `isNull(index)`,
    /// and `writeValue(index, &bytes)` appends its JSON otherwise. Returns `false`, writing nothing, when `clocks`
    /// (the row's clock column, as text) is not the form a reply carries as it is.
    ///
    /// In the changes layout a field without a value is left out unless it has a clock (it was cleared), as a
    /// ``Change`` leaves it out; in the rows layout it is `null`, and `clocks` names it when it has a clock.
    func write(
        id: UUID, space: UUID, seq: Int64, deleted: Bool, clocks: UnsafeRawBufferPointer,
        isNull: (Int) -> Bool, writeValue: (Int, inout [UInt8]) throws -> Void, into bytes: inout [UInt8]
    ) rethrows -> Bool {
        let text = clocks.assumingMemoryBound(to: UInt8.self)
        guard var pairs = ClockMap.wirePairs(text, capacity: names.count + 1) else { return false }
        if let star = pairs.firstIndex(where: { ClockMap.isRowClockKey($0.key) }) {
            let rowClock = pairs.remove(at: star).value
            return try writeStored(
                id: id, space: space, seq: seq, deleted: deleted, rowClock: rowClock, others: pairs,
                isNull: isNull, writeValue: writeValue, into: &bytes
            )
        }
        // The row clock covers the fields in the change that `clocks` does not name, each of which needs a clock. A
        // change carries a field with a value or a clock; a row of the rows layout shows a field without a value as
        // null, so a cleared field's clock always goes in `clocks`.
        var covered = 0
        var everyCoveredHasClock = true
        for index in names.indices {
            let hasValue = !isNull(index)
            // Clocks are most often stored in the fields' order: the pair at the field's own index is tried first.
            let clock = index < pairs.count && ClockMap.same(pairs[index].key, names[index])
                ? index : pairs.firstIndex { ClockMap.same($0.key, names[index]) }
            guard hasValue || (clock != nil && layout == .changes) else { continue }
            if let clock { pairs[clock].isField = true }
            covered += 1
            everyCoveredHasClock = everyCoveredHasClock && clock != nil
        }
        let rowForm = clockForm == .row && covered > 0 && everyCoveredHasClock
        switch layout {
        case .changes:
            try writeChange(id: id, space: space, seq: seq, deleted: deleted, text: text, pairs: pairs, rowForm: rowForm,
                            isNull: isNull, writeValue: writeValue, into: &bytes)
        case .rows:
            try writeRow(id: id, seq: seq, deleted: deleted, text: text, pairs: pairs, rowForm: rowForm,
                         isNull: isNull, writeValue: writeValue, into: &bytes)
        }
        return true
    }

    /// A row whose clocks are in the stored form with a row clock (``ClockMap/storedText(_:fields:)``). It covers the
    /// fields the row form's `clock` covers (a value, and no clock of their own), so the row form copies it and the
    /// other clocks as they are stored. The field form, or a row clock that covers no field, gets the clocks expanded.
    private func writeStored(
        id: UUID, space: UUID, seq: Int64, deleted: Bool, rowClock: ClockMap.Bytes, others: [ClockMap.ClockPair],
        isNull: (Int) -> Bool, writeValue: (Int, inout [UInt8]) throws -> Void, into bytes: inout [UInt8]
    ) rethrows -> Bool {
        let covered = names.indices.filter { index in !isNull(index) && !others.contains { ClockMap.same($0.key, names[index]) } }
        guard clockForm == .row, !covered.isEmpty else {
            // Every clock, keys in order, as ``ClockMap/text(_:)`` writes them.
            let entries = (others.map { (key: Array($0.key), value: $0.value) } + covered.map { (key: names[$0], value: rowClock) })
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            var flat: [UInt8] = [UInt8(ascii: "{")]
            flat.reserveCapacity(2 + entries.count * (rowClock.count + 24))
            for entry in entries {
                if flat.count > 1 { flat.append(UInt8(ascii: ",")) }
                flat.append(UInt8(ascii: "\""))
                flat.append(contentsOf: entry.key)
                flat.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
                ClockMap.appendQuoted(entry.value, &flat)
            }
            flat.append(UInt8(ascii: "}"))
            return try flat.withUnsafeBytes { clocks in
                try write(id: id, space: space, seq: seq, deleted: deleted, clocks: clocks, isNull: isNull, writeValue: writeValue, into: &bytes)
            }
        }
        let empty = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        switch layout {
        case .changes:
            try writeChange(id: id, space: space, seq: seq, deleted: deleted, text: empty, pairs: others, rowForm: true, stored: rowClock,
                            isNull: isNull, writeValue: writeValue, into: &bytes)
        case .rows:
            try writeRow(id: id, seq: seq, deleted: deleted, text: empty, pairs: others, rowForm: true, stored: rowClock,
                         isNull: isNull, writeValue: writeValue, into: &bytes)
        }
        return true
    }

    /// `stored` is the row clock of clocks in the stored form, written as `clock` with `pairs` (the others) as `clocks`.
    private func writeChange(
        id: UUID, space: UUID, seq: Int64, deleted: Bool, text: UnsafeBufferPointer<UInt8>, pairs: [ClockMap.ClockPair], rowForm: Bool,
        stored: ClockMap.Bytes? = nil, isNull: (Int) -> Bool, writeValue: (Int, inout [UInt8]) throws -> Void, into bytes: inout [UInt8]
    ) rethrows {
        var object = JSONObjectWriter(&bytes)
        if let stored {
            object.key("clock", &bytes)
            ClockMap.appendQuoted(stored, &bytes)
            if !pairs.isEmpty {
                object.key("clocks", &bytes)
                ClockMap.writeObject(pairs, into: &bytes)
            }
        } else if !rowForm || !ClockMap.writeRowForm(pairs, into: &object, &bytes) {
            object.key("clocks", &bytes)
            bytes.append(contentsOf: text)
        }
        bytes.append(UInt8(ascii: ","))
        bytes.append(contentsOf: collectionMember)
        bytes.append(contentsOf: deleted ? Self.trueBytes : Self.falseBytes)
        bytes.append(contentsOf: Self.fieldsKey)
        var first = true
        for index in written {
            if isNull(index), !pairs.contains(where: { ClockMap.same($0.key, names[index]) }) { continue }
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(contentsOf: memberKeys[index])
            if isNull(index) {
                bytes.append(contentsOf: Self.nullBytes)
            } else {
                try writeValue(index, &bytes)
            }
        }
        bytes.append(contentsOf: Self.idKey)
        JSONValue.write(id, into: &bytes)
        bytes.append(contentsOf: Self.seqKey)
        bytes.append(contentsOf: String(seq).utf8)
        bytes.append(contentsOf: Self.spaceKey)
        JSONValue.write(space, into: &bytes)
        object.end(&bytes)
    }

    /// `[id, seq, deleted, clock, clocks, field…]`: `clock` is `null` in the field form, where `clocks` holds them all.
    /// `stored` as in ``writeChange(id:space:seq:deleted:text:pairs:rowForm:stored:isNull:writeValue:into:)``.
    private func writeRow(
        id: UUID, seq: Int64, deleted: Bool, text: UnsafeBufferPointer<UInt8>, pairs: [ClockMap.ClockPair], rowForm: Bool,
        stored: ClockMap.Bytes? = nil, isNull: (Int) -> Bool, writeValue: (Int, inout [UInt8]) throws -> Void, into bytes: inout [UInt8]
    ) rethrows {
        bytes.append(UInt8(ascii: "["))
        JSONValue.write(id, into: &bytes)
        bytes.append(UInt8(ascii: ","))
        bytes.append(contentsOf: String(seq).utf8)
        bytes.append(UInt8(ascii: ","))
        bytes.append(contentsOf: deleted ? Self.trueBytes : Self.falseBytes)
        bytes.append(UInt8(ascii: ","))
        if let stored {
            ClockMap.appendQuoted(stored, &bytes)
            bytes.append(UInt8(ascii: ","))
            if pairs.isEmpty {
                bytes.append(contentsOf: Self.nullBytes)
            } else {
                ClockMap.writeObject(pairs, into: &bytes)
            }
        } else if !rowForm || !ClockMap.writeRowFormValues(pairs, into: &bytes) {
            bytes.append(contentsOf: Self.nullBytes)
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: text)
        }
        for index in names.indices {
            bytes.append(UInt8(ascii: ","))
            if isNull(index) {
                bytes.append(contentsOf: Self.nullBytes)
            } else {
                try writeValue(index, &bytes)
            }
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)
    private static let fieldsKey = Array(",\"fields\":{".utf8)
    private static let idKey = Array("},\"id\":".utf8)
    private static let seqKey = Array(",\"seq\":".utf8)
    private static let spaceKey = Array(",\"space\":".utf8)
}

extension Change {
    /// Writes this change as one row of `writer`'s rows layout, whose collection this change is of.
    func writeRow(into bytes: inout [UInt8], with writer: ChangeRowWriter) {
        let names = Array(writer.rowColumns.dropFirst(ChangeRowWriter.rowSyncColumns.count))
        let text = clocksText ?? ClockMap.text(clocks)
        let value = { (index: Int) in fields[names[index]] ?? .null }
        let written = Array(text.utf8).withUnsafeBytes { clocks in
            writer.write(
                id: id, space: space, seq: seq, deleted: deleted, clocks: clocks, isNull: { value($0).isNull },
                writeValue: { index, bytes in value(index).write(into: &bytes) }, into: &bytes
            )
        }
        guard !written else { return }
        // Clocks the writer cannot copy (a node that needs escapes): the field form, written from the parsed clocks.
        bytes.append(UInt8(ascii: "["))
        JSONValue.write(id, into: &bytes)
        bytes.append(contentsOf: ",\(seq),\(deleted),null,".utf8)
        ClockMap.write(clocks, into: &bytes)
        for index in names.indices {
            bytes.append(UInt8(ascii: ","))
            value(index).write(into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
