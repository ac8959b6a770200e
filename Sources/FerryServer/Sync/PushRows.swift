import FerryCore
import Foundation

/// The rows a push reads before planning: its records, their parents, and every stored descendant of the
/// records it deletes. The walk is shared; each engine only answers ``nextChildQuery()`` with a fetch.
struct PushRows {
    /// The stored rows read so far.
    var loaded: [RecordKey: StoredRecord] = [:]
    /// Each walked parent's stored children.
    var children: [RecordKey: [RecordKey]] = [:]
    private var pending: [(key: RecordKey, space: UUID)]
    private var queries: [ChildQuery] = []
    private let links: [String: [(collection: CollectionDefinition, field: String)]]

    init(entries: [Result<ValidatedMutation, Rejection>], schema: Schema) {
        pending = PushPlan.deleteRoots(entries)
        links = schema.childLinks
    }

    /// Records the rows fetched by id.
    mutating func add(_ rows: [(id: UUID, seq: Int64, record: StoredRecord)], collection: String) {
        for row in rows { loaded[RecordKey(collection: collection, id: row.id)] = row.record }
    }

    /// One fetch of children: the rows of `collection` in `space` whose `field` holds `parent.id`.
    struct ChildQuery {
        var parent: RecordKey
        var space: UUID
        var collection: CollectionDefinition
        var field: String
    }

    /// The next children to fetch; `nil` when done. Only the parent's space is searched: a child always lives there.
    mutating func nextChildQuery() -> ChildQuery? {
        while queries.isEmpty, let (parent, space) = pending.popLast() {
            guard children[parent] == nil else { continue }
            children[parent] = []
            queries = (links[parent.collection] ?? []).map { ChildQuery(parent: parent, space: space, collection: $0.collection, field: $0.field) }.reversed()
        }
        return queries.popLast()
    }

    /// Records the children a query returned, and walks below them next.
    mutating func addChildren(_ rows: [(id: UUID, seq: Int64, record: StoredRecord)], of query: ChildQuery) {
        for row in rows where row.record.space == query.space {
            let key = RecordKey(collection: query.collection.name, id: row.id)
            loaded[key] = loaded[key] ?? row.record
            children[query.parent, default: []].append(key)
            pending.append((key, query.space))
        }
    }
}
