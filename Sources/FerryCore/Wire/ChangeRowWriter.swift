import Foundation

/// Writes a pull reply's changes straight from a store's row, without building a ``Change`` first: the server's
/// pull, where filling each change's field dictionary and then writing it out were half of its time.
///
/// What it writes is, byte for byte, what ``Change``'s own writer gives for the same row (`ChangeRowWriterTests`
/// holds both to it). A row whose clocks are not in the form a reply carries as it is (``ClockMap/wireText(_:)``)
/// is refused, and the caller builds a ``Change`` for it.
public struct ChangeRowWriter {
    /// How the clocks are spelled (the form the pull asked for).
    public let clockForm: ClockForm
    /// `"collection":"<name>","deleted":`, the same for every row.
    private let collectionMember: [UInt8]
    /// The fields as the store's columns list them: each one's name and its `"name":` member key.
    private let names: [[UInt8]]
    private let memberKeys: [[UInt8]]
    /// Column indices in the order a change's `fields` object lists them (code-point order, as ``JSONValue`` sorts keys).
    private let written: [Int]

    /// A writer for rows of `collection` whose field columns are `fields`, in that order.
    public init(collection: String, fields: [String], clockForm: ClockForm) {
        self.clockForm = clockForm
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
    /// A field without a value is left out unless it has a clock (it was cleared), as a ``Change`` leaves it out.
    public func write(
        id: UUID, space: UUID, seq: Int64, deleted: Bool, clocks: UnsafeRawBufferPointer,
        isNull: (Int) -> Bool, writeValue: (Int, inout [UInt8]) throws -> Void, into bytes: inout [UInt8]
    ) rethrows -> Bool {
        let text = clocks.assumingMemoryBound(to: UInt8.self)
        guard var pairs = ClockMap.wirePairs(text, capacity: names.count + 1) else { return false }
        var present = 0
        var everyFieldHasClock = true
        for index in names.indices {
            // A field is in the change when it has a value or a clock; the row form needs a clock for each.
            let clock = pairs.firstIndex { ClockMap.same($0.key, names[index]) }
            if let clock {
                pairs[clock].isField = true
            } else if isNull(index) {
                continue
            }
            present += 1
            everyFieldHasClock = everyFieldHasClock && clock != nil
        }
        var object = JSONObjectWriter(&bytes)
        if clockForm != .row || present == 0 || !everyFieldHasClock || !ClockMap.writeRowForm(pairs, into: &object, &bytes) {
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
        return true
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)
    private static let fieldsKey = Array(",\"fields\":{".utf8)
    private static let idKey = Array("},\"id\":".utf8)
    private static let seqKey = Array(",\"seq\":".utf8)
    private static let spaceKey = Array(",\"space\":".utf8)
}
