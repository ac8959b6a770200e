/// One typed field of a collection.
public struct FieldDefinition: Sendable, Hashable, Codable {
    /// The field's name, which is also its column name.
    public var name: String
    /// The field's declared type.
    public var type: FieldType
    /// Whether a record must carry a value for this field.
    ///
    /// Enforced when records are written, not by a `NOT NULL` column: offline-first
    /// devices merge fields one by one, so a column may be briefly empty during a merge.
    public var isRequired: Bool

    /// Creates a field definition.
    public init(name: String, type: FieldType, isRequired: Bool = false) {
        self.name = name
        self.type = type
        self.isRequired = isRequired
    }
}
