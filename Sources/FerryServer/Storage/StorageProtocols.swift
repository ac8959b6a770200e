import FerryCore

/// Answers whether the database is reachable; backs `/health`.
public protocol HealthStorage: Sendable {
    /// Runs a trivial query; throws when the database does not answer.
    func ping() async throws
}

/// Applies the server's own versioned migrations (`ferry_*` tables).
public protocol MigrationStorage: Sendable {
    /// The versions already applied, ascending.
    func appliedMigrationVersions() async throws -> [Int]
    /// Applies every migration not yet applied, each in its own transaction, and returns them.
    @discardableResult
    func migrate(_ migrations: [Migration]) async throws -> [Migration]
}

/// Keeps the collection tables in step with the schema.
public protocol SchemaStorage: Sendable {
    /// The collections the database was last built for.
    func storedCollections() async throws -> [CollectionDefinition]
    /// Plans and applies the additive changes from the stored collections to `schema`, in one transaction.
    /// Throws ``DestructiveSchemaChangeError`` (changing nothing) when a change would lose data.
    @discardableResult
    func apply(_ schema: Schema) async throws -> [SchemaChange]
}

/// An open database: one value per engine that serves every storage domain.
public protocol DatabaseStorage: HealthStorage, MigrationStorage, SchemaStorage, AuthStorage, ProfileStorage, IdentityStorage, EmailCodeStorage,
    OperatorStorage {
    /// Which SQL the engine speaks.
    var dialect: SQLDialect { get }
    /// Releases connections; the storage is unusable afterwards.
    func close() async throws
}
