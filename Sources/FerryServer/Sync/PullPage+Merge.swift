import FerryCore
import Foundation

/// How a pull's changes are written: the clock form and the layout it asked for.
struct PullFormat: Sendable {
    var clockForm: ClockForm
    var layout: PullLayout

    /// The writer of `collection`'s rows, its field columns in the schema's order.
    func writer(for collection: CollectionDefinition) -> ChangeRowWriter {
        ChangeRowWriter(collection: collection.name, fields: collection.fields.map(\.name), clockForm: clockForm, layout: layout)
    }
}

/// One change of a pull, already in the reply's JSON: written as its row was read, so a page of thousands is never
/// held as ``Change`` values (their field dictionaries were most of the server's work in a pull).
struct WireChange: Sendable {
    var seq: Int64
    var space: UUID
    var collection: String
    /// What a page of the rows layout spends before its rows, counted when this change starts one
    /// (``ChangeRowWriter/pageHeaderBytes``).
    var pageHeaderBytes: Int
    /// The change's JSON (an object, or an array in the rows layout): a slice of the buffer its page was written
    /// into, shared, not copied.
    var json: ArraySlice<UInt8>
}

/// The changes of one space's read, written into one buffer as they come.
struct WireChanges {
    let space: UUID
    private var buffer: [UInt8] = []
    private var entries: [(seq: Int64, collection: String, pageHeaderBytes: Int, range: Range<Int>)] = []

    /// Room for `capacity` changes, reserved a little at a time: a space read for a page of 5,000 often holds a few.
    init(space: UUID, capacity: Int) {
        self.space = space
        buffer.reserveCapacity(min(capacity, 256) * 320)
        entries.reserveCapacity(min(capacity, 256))
    }

    /// Appends the change with sequence number `seq` that `write` writes, as `writer` lays it out, unless `write`
    /// returns `false` (having written nothing); returns what `write` returned.
    @discardableResult
    mutating func append(seq: Int64, writer: ChangeRowWriter, _ write: (inout [UInt8]) throws -> Bool) rethrows -> Bool {
        let start = buffer.count
        guard try write(&buffer) else { return false }
        entries.append((seq, writer.collection, writer.pageHeaderBytes, start..<buffer.count))
        return true
    }

    /// Appends `change` as `writer` lays it out.
    mutating func append(_ change: Change, with writer: ChangeRowWriter) {
        append(seq: change.seq, writer: writer) { bytes in
            switch writer.layout {
            case .changes: change.writeJSON(into: &bytes, clockForm: writer.clockForm)
            case .rows: change.writeRow(into: &bytes, with: writer)
            }
            return true
        }
    }

    /// The bytes of JSON written so far.
    var byteCount: Int { buffer.count }

    /// Set once a collection's read stopped at the reply's byte budget: its later rows were never read.
    private(set) var isCut = false

    /// Whether the rows of one collection appended since `start` (a ``byteCount``) spent more than `budget` bytes,
    /// marking the read cut when they did. The caller then reads no further rows of it: a reply cut to `budget`
    /// cannot reach past them (``PullPage/limited(toBytes:atLeastOne:start:)``), and a page of limit + 1 records
    /// of the largest size no longer sits in memory whole (5,001 × 256 KiB).
    mutating func spent(_ budget: Int, since start: Int) -> Bool {
        isCut = isCut || buffer.count - start > budget
        return buffer.count - start > budget
    }

    var changes: [WireChange] {
        entries.map { WireChange(seq: $0.seq, space: space, collection: $0.collection, pageHeaderBytes: $0.pageHeaderBytes, json: buffer[$0.range]) }
    }
}

extension PullPage {
    /// The first `limit` changes in sequence order, from up to `limit + 1` per collection; it has more when some
    /// collection's read was cut at the byte budget too.
    init(sorted changes: WireChanges, cursor: Int64, limit: Int) {
        var ordered = changes.changes
        ordered.sort { $0.seq < $1.seq }
        let page = Array(ordered.prefix(limit))
        self.init(changes: page, cursor: page.last?.seq ?? cursor, hasMore: ordered.count > limit || changes.isCut, resetRequired: false)
    }
}

extension PullPage {
    /// This page cut to the changes that fit in `bytes` (or its first one when `atLeastOne`); a cut page says it has
    /// more and ends its cursor at its last change, or at `start`, the cursor it was read after, when none fit. In the
    /// rows layout, each run of one collection counts its page's header too.
    func limited(toBytes bytes: Int, atLeastOne: Bool, start: Int64) -> (page: PullPage, bytes: Int) {
        var used = 0
        var kept = 0
        for (index, change) in changes.enumerated() {
            let startsPage = index == 0 || changes[index - 1].collection != change.collection
            let size = change.json.count + 1 + (startsPage ? change.pageHeaderBytes : 0)
            guard used + size <= bytes || (atLeastOne && kept == 0) else { break }
            used += size
            kept += 1
        }
        guard kept < changes.count else { return (self, used) }
        let page = Array(changes.prefix(kept))
        return (PullPage(changes: page, cursor: page.last?.seq ?? start, hasMore: true, resetRequired: false), used)
    }
}

extension Change {
    init(space: UUID, collection: String, id: UUID, seq: Int64, record: StoredRecord) {
        if let clocksText = record.clocksText {
            self.init(
                space: space, collection: collection, id: id, seq: seq, fields: record.state.fields, clocksText: clocksText,
                deleted: record.state.isDeleted
            )
        } else {
            self.init(
                space: space, collection: collection, id: id, seq: seq,
                fields: record.state.fields, clocks: record.state.clocks, deleted: record.state.isDeleted
            )
        }
    }
}
