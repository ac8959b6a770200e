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

    /// Creates a schema from already-validated collections.
    public init(collections: [CollectionDefinition], requiredProfileFields: [String] = []) {
        self.collections = collections
        self.requiredProfileFields = requiredProfileFields
    }

    /// A schema with only the system collections and no profile fields.
    public static let empty = Schema(collections: [CollectionDefinition(name: "profiles", fields: [], isSystem: true)])

    /// The collection with the given name, if any.
    public func collection(named name: String) -> CollectionDefinition? {
        collections.first { $0.name == name }
    }
}
