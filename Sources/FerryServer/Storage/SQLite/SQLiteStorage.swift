import FerryCore
import FerryGRDB
import FerrySecurity
import Foundation
import GRDB
import Synchronization

/// The embedded engine: one SQLite file in WAL mode, through a GRDB pool (one writer, concurrent readers).
public final class SQLiteStorage: DatabaseStorage {
    public let dialect = SQLDialect.sqlite
    let pool: DatabasePool
    /// Held (shared) while the storage is open, so `ferry backup restore` cannot replace the database under it.
    private let folderLock: Mutex<DataDirectoryLock?>

    /// Opens (creating when missing) the database at `path`, creating its folder too. The folder is made (or
    /// tightened to) 0700 and the database, its WAL and its shared-memory file 0600: they hold emails and password
    /// hashes.
    public init(path: String) throws(ServerStartupError) {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            if !folder.isEmpty {
                try OwnerOnlyPath.folder(folder)
            }
            for file in [path, path + "-wal", path + "-shm"] where file == path || FileManager.default.fileExists(atPath: file) {
                try OwnerOnlyPath.file(file)
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.zeroDeletedContentOnlyInWrittenPages()
            }
            folderLock = Mutex(try? DataDirectoryLock.take(folder.isEmpty ? "." : folder, exclusive: false))
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw ServerStartupError(.dataDirectoryUnusable, "cannot open the SQLite database at \(path): \(Self.reason(error))")
        }
    }

    public func close() async throws {
        try pool.close()
        folderLock.withLock { $0 = nil }
    }

    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return (error as NSError).localizedDescription
    }
}

extension SQLiteStorage {
    public func appliedMigrationVersions() async throws -> [Int] {
        try await pool.write { db in
            try Self.createMigrationTable(db)
            return try Int.fetchAll(db, sql: "SELECT version FROM ferry_migrations ORDER BY version")
        }
    }

    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws -> [Migration] {
        let pending = try Migration.pending(migrations, applied: try await appliedMigrationVersions())
        for migration in pending {
            try await pool.write { db in
                for statement in migration.sqlite { try db.execute(sql: statement) }
                try db.execute(
                    sql: "INSERT INTO ferry_migrations (version, name) VALUES (?, ?)",
                    arguments: [migration.version, migration.name]
                )
            }
        }
        return pending
    }

    private static func createMigrationTable(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS ferry_migrations (
              version INTEGER PRIMARY KEY NOT NULL,
              name TEXT NOT NULL,
              applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
            ) STRICT
            """)
    }
}

extension SQLiteStorage {
    public func storedCollections() async throws -> [CollectionDefinition] {
        try await pool.read { db in try Self.storedCollections(db) }
    }

    @discardableResult
    public func apply(_ schema: Schema) async throws -> [SchemaChange] {
        try await pool.write { db in
            let changes = try SchemaMigrationPlanner.plan(from: try Self.storedCollections(db), to: schema.collections)
            for change in changes {
                for statement in SQLDialect.sqlite.statements(for: change) { try db.execute(sql: statement) }
            }
            for collection in CollectionCatalog.changedCollections(changes) {
                try db.execute(
                    sql: """
                        INSERT INTO ferry_collections (name, definition) VALUES (?, ?)
                        ON CONFLICT (name) DO UPDATE SET definition = excluded.definition,
                          updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
                        """,
                    arguments: [collection.name, try CollectionCatalog.encode(collection)]
                )
            }
            try Self.addSealedColumns(db, schema)
            return changes
        }
    }

    /// Gives tables created before the `_sealed` column existed that column (SQLite has no `ADD COLUMN IF NOT EXISTS`).
    private static func addSealedColumns(_ db: Database, _ schema: Schema) throws {
        for collection in schema.collections {
            // PRAGMA table_info, not GRDB's cached `columns(in:)`: the table may have changed under another connection.
            let hasColumn = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?) WHERE name = ?)",
                arguments: [collection.name, SQLDialect.sealedColumn]
            ) ?? false
            if !hasColumn {
                try db.execute(sql: "ALTER TABLE \(SQLDialect.sqlite.quote(collection.name)) ADD COLUMN \(SQLDialect.sqlite.sealedColumnDefinition)")
            }
        }
    }

    private static func storedCollections(_ db: Database) throws -> [CollectionDefinition] {
        try String.fetchAll(db, sql: "SELECT definition FROM ferry_collections ORDER BY name").map(CollectionCatalog.decode)
    }
}
