/// One additive step that brings a database's tables from the schema it has to the schema it is given.
public enum SchemaChange: Sendable, Hashable {
    /// A new collection: create its table and indexes.
    case createCollection(CollectionDefinition)
    /// A new optional field of an existing collection: add its column.
    case addField(collection: CollectionDefinition, field: FieldDefinition)
    /// A new unique key on an existing collection: create its index.
    case addUniqueKey(collection: CollectionDefinition, key: [String])
    /// A unique key no longer declared: drop its index (no data is lost).
    case dropUniqueKey(collection: CollectionDefinition, key: [String])
    /// A change with no table change, such as a required field becoming optional: record the new definition.
    case updateDefinition(CollectionDefinition)

    /// The collection whose definition this change records.
    public var collection: CollectionDefinition {
        switch self {
        case .createCollection(let collection), .updateDefinition(let collection): collection
        case .addField(let collection, _), .addUniqueKey(let collection, _), .dropUniqueKey(let collection, _): collection
        }
    }
}

/// A schema change that would lose data or break synced devices, so the server refuses to apply it.
public struct DestructiveSchemaChangeError: FerryError, Hashable {
    /// One refused change, naming the collection and (when there is one) the field.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The collection concerned.
        public var collection: String
        /// The field concerned, if any.
        public var field: String?
        /// What the change would do and how to avoid it.
        public var message: String

        /// `collection.field: message`.
        public var description: String {
            "\(field.map { "\(collection).\($0)" } ?? collection): \(message)"
        }
    }

    /// Every refused change, not only the first.
    public var problems: [Problem]

    /// Always `destructive_schema_change`.
    public var code: ErrorCode { .destructiveSchemaChange }

    /// One line listing every problem.
    public var message: String {
        "refusing a destructive schema change: " + problems.map(\.description).joined(separator: "; ")
    }
}
