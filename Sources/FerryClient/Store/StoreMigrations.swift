import GRDB

/// Versioned migrations of Ferry's own tables in the device store (the collections' tables follow the schema through
/// ``LocalStore/migrate(to:)`` instead).
///
/// Each migration runs once, in a transaction, recorded in GRDB's `grdb_migrations` table; a store made by an older
/// app version gets exactly the ones it lacks. Append new ones at the end; never edit or reorder a shipped one.
enum StoreMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // v1 is the schema stores had before migrations were versioned: `IF NOT EXISTS` lets it adopt those stores.
        migrator.registerMigration("v1 ferry tables") { db in
            try db.execute(sql: v1)
        }
        migrator.registerMigration("v2 outbox by space") { db in
            // Locked encrypted spaces are looked up in the outbox by space on every sync that has one.
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS ferry_outbox__space ON ferry_outbox (space, mutation_id)")
        }
        migrator.registerMigration("v3 blobs") { db in
            try db.execute(sql: v3)
        }
        migrator.registerMigration("v4 outbox without the space index") { db in
            // Every local write paid for this index (one more page per transaction, ~15% of a `put`); the lookups it
            // served run only while a space is locked, and scan an outbox of 100,000 entries in milliseconds.
            try db.execute(sql: "DROP INDEX IF EXISTS ferry_outbox__space")
        }
        return migrator
    }

    /// The blob cache's index and the transfer queue (`docs/blobs.md`).
    private static let v3 = """
        CREATE TABLE ferry_blob_cache (
          sha256 TEXT PRIMARY KEY NOT NULL,
          size INTEGER NOT NULL,
          sealed INTEGER NOT NULL DEFAULT 0,
          pinned INTEGER NOT NULL DEFAULT 0,
          last_access_at TEXT NOT NULL
        ) STRICT;
        CREATE TABLE ferry_blob_transfers (
          space TEXT NOT NULL,
          sha256 TEXT NOT NULL,
          direction TEXT NOT NULL,
          size INTEGER NOT NULL,
          content_type TEXT NOT NULL,
          collection TEXT NOT NULL,
          field TEXT NOT NULL,
          confirmed INTEGER NOT NULL DEFAULT 0,
          attempts INTEGER NOT NULL DEFAULT 0,
          retry_at TEXT,
          failed INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          created_at TEXT NOT NULL,
          PRIMARY KEY (space, sha256, direction)
        ) STRICT;
        """

    private static let v1 = """
        CREATE TABLE IF NOT EXISTS ferry_state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS ferry_cursors (space TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS ferry_collections (name TEXT PRIMARY KEY NOT NULL, definition TEXT NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS ferry_outbox (
          mutation_id INTEGER PRIMARY KEY AUTOINCREMENT,
          space TEXT NOT NULL,
          collection TEXT NOT NULL,
          record_id TEXT NOT NULL,
          op TEXT NOT NULL,
          fields TEXT NOT NULL,
          clocks TEXT NOT NULL,
          created_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS ferry_outbox__record ON ferry_outbox (collection, record_id);
        CREATE TABLE IF NOT EXISTS ferry_rejections (
          mutation_id INTEGER PRIMARY KEY NOT NULL,
          space TEXT NOT NULL,
          collection TEXT NOT NULL,
          record_id TEXT NOT NULL,
          op TEXT NOT NULL,
          fields TEXT NOT NULL,
          clocks TEXT NOT NULL,
          code TEXT NOT NULL,
          message TEXT NOT NULL,
          rejected_at TEXT NOT NULL
        ) STRICT;
        CREATE INDEX IF NOT EXISTS ferry_rejections__record ON ferry_rejections (collection, record_id);
        CREATE TABLE IF NOT EXISTS ferry_pending_spaces (
          id TEXT PRIMARY KEY NOT NULL,
          name TEXT NOT NULL,
          encrypted INTEGER NOT NULL,
          created_at TEXT NOT NULL
        ) STRICT;
        CREATE TABLE IF NOT EXISTS ferry_secrets (
          space TEXT NOT NULL,
          key_version INTEGER NOT NULL,
          enc TEXT NOT NULL,
          ciphertext TEXT NOT NULL,
          PRIMARY KEY (space, key_version)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS ferry_space_keys (space TEXT PRIMARY KEY NOT NULL, key_version INTEGER NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS ferry_cascades (
          collection TEXT NOT NULL,
          record_id TEXT NOT NULL,
          PRIMARY KEY (collection, record_id)
        ) STRICT;
        """
}
