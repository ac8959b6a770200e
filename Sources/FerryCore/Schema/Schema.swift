/// The collections an app syncs, loaded from one or more schema files.
///
/// A schema always contains the system collection `profiles` (one record per user, id = user id),
/// whose fields come from the file's `profile` section.
public struct Schema: Sendable, Hashable, Codable {
    /// The names Ferry reserves for its own collections.
    public static let systemCollectionNames: Set<String> = ["profiles", "devices", "spaces", "members", "secrets"]

    /// Every collection, system ones included, parents before their children.
    public var collections: [CollectionDefinition]
    /// The profile fields a user must fill before the app leaves onboarding.
    public var requiredProfileFields: [String]
    /// The Storage buckets (`/storage/v1`), by name order.
    public var buckets: [BucketDefinition]

    /// Creates a schema from already-validated collections.
    public init(collections: [CollectionDefinition], requiredProfileFields: [String] = [], buckets: [BucketDefinition] = []) {
        self.collections = collections
        self.requiredProfileFields = requiredProfileFields
        self.buckets = buckets
    }

    enum CodingKeys: String, CodingKey { case collections, requiredProfileFields, buckets }

    /// Reads a schema; one saved before buckets existed has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        collections = try container.decode([CollectionDefinition].self, forKey: .collections)
        requiredProfileFields = try container.decode([String].self, forKey: .requiredProfileFields)
        buckets = try container.decodeIfPresent([BucketDefinition].self, forKey: .buckets) ?? []
    }

    /// The bucket with the given name, if any.
    public func bucket(named name: String) -> BucketDefinition? {
        buckets.first { $0.name == name }
    }

    /// A schema with only the system collections and no profile fields.
    public static let empty = Schema(collections: [CollectionDefinition(name: "profiles", fields: [], isSystem: true)])

    /// The collection with the given name, if any.
    public func collection(named name: String) -> CollectionDefinition? {
        collections.first { $0.name == name }
    }
}
