import Synchronization

/// Statement texts built from a collection's name and field names, kept per collection: a push or a pull page writes
/// hundreds of rows, and building the same `INSERT …` text for each (quoting every column) cost more than SQLite's
/// work for the row.
///
/// An entry is reused only while the collection has the same fields, so a schema that gains a field gets a new text.
public final class StatementTextCache: Sendable {
    private let entries = Mutex<[String: (fields: [String], text: String)]>([:])

    /// Creates an empty cache.
    public init() {}

    /// The text for `collection`, from `build` the first time (and after its fields change).
    public func text(for collection: CollectionDefinition, build: (CollectionDefinition) -> String) -> String {
        if let cached = entries.withLock({ $0[collection.name] }), cached.fields.elementsEqual(collection.fields.lazy.map { $0.name }) {
            return cached.text
        }
        let text = build(collection)
        entries.withLock { $0[collection.name] = (collection.fields.map(\.name), text) }
        return text
    }
}
