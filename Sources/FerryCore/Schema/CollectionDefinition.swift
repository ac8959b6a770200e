/// A collection declared in a schema: a table of records on the server and on every device.
public struct CollectionDefinition: Sendable, Hashable, Codable {
    /// The link from a child collection to its parent.
    public struct ParentLink: Sendable, Hashable, Codable {
        /// The parent collection's name.
        public var collection: String
        /// The `uuid` field of this collection that holds the parent's id.
        public var field: String

        /// Creates a parent link.
        public init(collection: String, field: String) {
            self.collection = collection
            self.field = field
        }
    }

    /// The collection's name, which is also its table name.
    public var name: String
    /// The fields in declaration order, without the reserved columns.
    public var fields: [FieldDefinition]
    /// The parent collection, when records of this one are children (deleting a parent deletes them).
    public var parent: ParentLink?
    /// Unique keys, each a list of field names; uniqueness holds within one space.
    public var uniqueKeys: [[String]]
    /// Whether field values are end-to-end encrypted on the device.
    public var isEncrypted: Bool
    /// Whether Ferry itself defines this collection (`profiles`, …) rather than a schema file.
    public var isSystem: Bool

    /// Creates a collection definition.
    public init(
        name: String,
        fields: [FieldDefinition],
        parent: ParentLink? = nil,
        uniqueKeys: [[String]] = [],
        isEncrypted: Bool = false,
        isSystem: Bool = false
    ) {
        self.name = name
        self.fields = fields
        self.parent = parent
        self.uniqueKeys = uniqueKeys
        self.isEncrypted = isEncrypted
        self.isSystem = isSystem
    }

    /// The field with the given name, if the collection declares one.
    public func field(named name: String) -> FieldDefinition? {
        fields.first { $0.name == name }
    }
}
