import FerryCore
import PostgresNIO

extension PostgresStorage {
    public func appliedMigrationVersions() async throws -> [Int] {
        try await withStandaloneConnection { connection in
            try await self.transaction(on: connection) {
                try await self.lockSchema(connection)
                try await self.createMigrationTable(connection)
                return try await self.appliedVersions(connection)
            }
        }
    }

    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws -> [Migration] {
        try await withStandaloneConnection { connection in
            try await self.transaction(on: connection) {
                try await self.lockSchema(connection)
                try await self.createMigrationTable(connection)
                let pending = try Migration.pending(migrations, applied: try await self.appliedVersions(connection))
                for migration in pending {
                    for statement in migration.postgres {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                    try await connection.query(
                        "INSERT INTO ferry_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: self.logger
                    )
                }
                return pending
            }
        }
    }

    public func storedCollections() async throws -> [CollectionDefinition] {
        try await withStandaloneConnection { connection in try await self.storedCollections(connection) }
    }

    @discardableResult
    public func apply(_ schema: Schema) async throws -> [SchemaChange] {
        try await withStandaloneConnection { connection in
            try await self.transaction(on: connection) {
                try await self.lockSchema(connection)
                let changes = try SchemaMigrationPlanner.plan(
                    from: try await self.storedCollections(connection), to: schema.collections
                )
                for change in changes {
                    for statement in SQLDialect.postgres.statements(for: change) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                }
                for collection in CollectionCatalog.changedCollections(changes) {
                    let definition = try CollectionCatalog.encode(collection)
                    try await connection.query(
                        """
                        INSERT INTO ferry_collections (name, definition) VALUES (\(collection.name), \(definition))
                        ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = now()
                        """,
                        logger: self.logger
                    )
                }
                try await self.addSealedColumns(connection, schema)
                return changes
            }
        }
    }

    /// Gives tables created before the `_sealed` column existed that column. Tables that have it are left alone, so a
    /// restart takes no table lock.
    private func addSealedColumns(_ connection: PostgresConnection, _ schema: Schema) async throws {
        var sealed: Set<String> = []
        let rows = try await connection.query(
            "SELECT table_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = \(SQLDialect.sealedColumn)",
            logger: logger
        )
        for try await name in rows.decode(String.self) { sealed.insert(name) }
        for collection in schema.collections where !sealed.contains(collection.name) {
            let statement = "ALTER TABLE \(SQLDialect.postgres.quote(collection.name)) ADD COLUMN IF NOT EXISTS \(SQLDialect.postgres.sealedColumnDefinition)"
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    /// Runs `body` in a transaction on `connection`, rethrowing its own error (not PostgresNIO's wrapper),
    /// so a refused schema change reaches the caller as ``DestructiveSchemaChangeError``.
    func transaction<Result: Sendable>(
        on connection: PostgresConnection, _ body: () async throws -> Result
    ) async throws -> Result {
        try await connection.query("BEGIN", logger: logger)
        do {
            let result = try await body()
            try await connection.query("COMMIT", logger: logger)
            return result
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// Serialises migrations and schema changes of server instances starting together on one database.
    func lockSchema(_ connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", logger: logger)
    }

    private func createMigrationTable(_ connection: PostgresConnection) async throws {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS ferry_migrations (
              version integer PRIMARY KEY,
              name text NOT NULL,
              applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
    }

    private func appliedVersions(_ connection: PostgresConnection) async throws -> [Int] {
        var versions: [Int] = []
        for try await version in try await connection.query("SELECT version FROM ferry_migrations ORDER BY version", logger: logger)
            .decode(Int.self) {
            versions.append(version)
        }
        return versions
    }

    private func storedCollections(_ connection: PostgresConnection) async throws -> [CollectionDefinition] {
        var collections: [CollectionDefinition] = []
        for try await definition in try await connection.query("SELECT definition FROM ferry_collections ORDER BY name", logger: logger)
            .decode(String.self) {
            collections.append(try CollectionCatalog.decode(definition))
        }
        return collections
    }
}
