import FerryCore
import Foundation

extension PullPage {
    /// The first `limit` changes in sequence order, from up to `limit + 1` per collection.
    init(sorted changes: [Change], cursor: Int64, limit: Int) {
        let ordered = changes.sorted { $0.seq < $1.seq }
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
            let size = change.approximateWireBytes
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
