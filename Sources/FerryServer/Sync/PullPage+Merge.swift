import FerryCore
import Foundation

/// One change of a pull, already in the reply's JSON: written as its row was read, so a page of thousands is never
/// held as ``Change`` values (their field dictionaries were most of the server's work in a pull).
struct WireChange: Sendable {
    var seq: Int64
    /// The change's JSON object: a slice of the buffer its page was written into, shared, not copied.
    var json: ArraySlice<UInt8>
}

/// The changes of one read, written into one buffer as they come.
struct WireChanges {
    private var buffer: [UInt8] = []
    private var entries: [(seq: Int64, range: Range<Int>)] = []

    init(capacity: Int) {
        buffer.reserveCapacity(capacity * 320)
        entries.reserveCapacity(capacity)
    }

    /// Appends the change of sequence number `seq` that `write` writes, unless it returns `false` (having written
    /// nothing); returns what `write` returned.
    @discardableResult
    mutating func append(seq: Int64, _ write: (inout [UInt8]) throws -> Bool) rethrows -> Bool {
        let start = buffer.count
        guard try write(&buffer) else { return false }
        entries.append((seq, start..<buffer.count))
        return true
    }

    /// Appends `change`, in `clockForm`.
    mutating func append(_ change: Change, clockForm: ClockForm) {
        append(seq: change.seq) { bytes in
            change.writeJSON(into: &bytes, clockForm: clockForm)
            return true
        }
    }

    var changes: [WireChange] {
        entries.map { WireChange(seq: $0.seq, json: buffer[$0.range]) }
    }
}

extension PullPage {
    /// The first `limit` changes in sequence order, from up to `limit + 1` per collection.
    init(sorted changes: [WireChange], cursor: Int64, limit: Int) {
        var ordered = changes
        ordered.sort { $0.seq < $1.seq }
        let page = Array(ordered.prefix(limit))
        self.init(changes: page, cursor: page.last?.seq ?? cursor, hasMore: ordered.count > limit, resetRequired: false)
    }
}

extension PullPage {
    /// This page cut to the changes that fit in `bytes` (or its first one when `atLeastOne`); a cut page says it has
    /// more and ends its cursor at its last change, or at `start`, the cursor it was read after, when none fit.
    func limited(toBytes bytes: Int, atLeastOne: Bool, start: Int64) -> (page: PullPage, bytes: Int) {
        var used = 0
        var kept = 0
        for change in changes {
            let size = change.json.count + 1
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
