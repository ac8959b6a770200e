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

extension Change {
    init(space: UUID, collection: String, id: UUID, seq: Int64, record: StoredRecord) {
        self.init(
            space: space, collection: collection, id: id, seq: seq,
            fields: record.state.fields, clocks: record.state.clocks, deleted: record.state.isDeleted
        )
    }
}
