import FerryCore
import Foundation

/// The rows a push reads before planning: its records, their parents, and every stored descendant of the
/// records it deletes. The walk is shared; each engine only answers ``nextChildQuery()`` with a fetch.
struct PushRows {
    /// The stored rows read so far.
    var loaded: [RecordKey: StoredRecord] = [:]
    /// Each walked parent's stored children.
    var children: [RecordKey: [RecordKey]] = [:]
    private var pending: [RecordKey]
    private var queries: [(parent: RecordKey, collection: CollectionDefinition, field: String)] = []
    private let links: [String: [(collection: CollectionDefinition, field: String)]]

    init(entries: [Result<ValidatedMutation, Rejection>], schema: Schema) {
        pending = PushPlan.deleteRoots(entries)
        links = schema.childLinks
    }

    /// Records the rows fetched by id.
    mutating func add(_ rows: [(id: UUID, seq: Int64, record: StoredRecord)], collection: String) {
        for row in rows { loaded[RecordKey(collection: collection, id: row.id)] = row.record }
    }

    /// The next children to fetch: the rows of `collection` whose `field` holds `parent.id`; `nil` when done.
    mutating func nextChildQuery() -> (parent: RecordKey, collection: CollectionDefinition, field: String)? {
        while queries.isEmpty, let parent = pending.popLast() {
            guard children[parent] == nil else { continue }
            children[parent] = []
            queries = (links[parent.collection] ?? []).map { (parent, $0.collection, $0.field) }.reversed()
        }
        return queries.popLast()
    }

    /// Records the children a query returned, and walks below them next.
    mutating func addChildren(_ rows: [(id: UUID, seq: Int64, record: StoredRecord)], of query: (parent: RecordKey, collection: CollectionDefinition, field: String)) {
        for row in rows {
            let key = RecordKey(collection: query.collection.name, id: row.id)
            loaded[key] = loaded[key] ?? row.record
            children[query.parent, default: []].append(key)
            pending.append(key)
        }
    }
}
