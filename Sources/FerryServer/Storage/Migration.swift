import FerryCore

/// One versioned change to the server's own tables, written once per engine.
///
/// Versions are applied in ascending order, each in a transaction with its bookkeeping row in
/// `ferry_migrations`, so a crash leaves a migration either fully applied or not at all.
public struct Migration: Sendable, Hashable {
    /// Ascending, never reused.
    public var version: Int
    /// A short name for logs.
    public var name: String
    /// Statements for SQLite.
    public var sqlite: [String]
    /// Statements for PostgreSQL.
    public var postgres: [String]

    /// Creates a migration.
    public init(version: Int, name: String, sqlite: [String], postgres: [String]) {
        self.version = version
        self.name = name
        self.sqlite = sqlite
        self.postgres = postgres
    }

    /// The statements for `dialect`.
    public func statements(for dialect: SQLDialect) -> [String] {
        dialect == .sqlite ? sqlite : postgres
    }

    /// The migrations pending after `applied`, or an error when the database is newer than this server.
    static func pending(_ migrations: [Migration], applied: [Int]) throws(ServerStartupError) -> [Migration] {
        let known = Set(migrations.map(\.version))
        if let unknown = applied.first(where: { !known.contains($0) }) {
            throw ServerStartupError(
                .databaseTooNew,
                "the database has migration \(unknown), which this ferry does not know; it was upgraded by a newer ferry, so run that version"
            )
        }
        let done = Set(applied)
        return migrations.filter { !done.contains($0.version) }.sorted { $0.version < $1.version }
    }
}

extension Migration {
    /// The server's migrations, in order. Later features append here; never edit a released one.
    public static let server: [Migration] = [
        Migration(
            version: 1,
            name: "collection catalog",
            sqlite: [
                """
                CREATE TABLE ferry_collections (
                  name TEXT PRIMARY KEY NOT NULL,
                  definition TEXT NOT NULL,
                  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                ) STRICT
                """
            ],
            postgres: [
                """
                CREATE TABLE ferry_collections (
                  name text PRIMARY KEY,
                  definition text NOT NULL,
                  updated_at timestamptz NOT NULL DEFAULT now()
                )
                """
            ]
        ),
        Migration(
            version: 2,
            name: "accounts, sessions, refresh tokens, spaces",
            sqlite: [
                """
                CREATE TABLE ferry_users (
                  id TEXT PRIMARY KEY NOT NULL,
                  email TEXT NOT NULL UNIQUE,
                  password_hash TEXT NOT NULL,
                  user_metadata TEXT NOT NULL DEFAULT '{}',
                  created_at TEXT NOT NULL,
                  updated_at TEXT NOT NULL,
                  last_sign_in_at TEXT
                ) STRICT
                """,
                """
                CREATE TABLE ferry_sessions (
                  id TEXT PRIMARY KEY NOT NULL,
                  user_id TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  created_at TEXT NOT NULL,
                  refreshed_at TEXT NOT NULL
                ) STRICT
                """,
                "CREATE INDEX ferry_sessions_user ON ferry_sessions (user_id)",
                """
                CREATE TABLE ferry_refresh_tokens (
                  token_hash TEXT PRIMARY KEY NOT NULL,
                  session_id TEXT NOT NULL REFERENCES ferry_sessions (id) ON DELETE CASCADE,
                  parent_hash TEXT,
                  created_at TEXT NOT NULL,
                  revoked_at TEXT
                ) STRICT
                """,
                "CREATE INDEX ferry_refresh_tokens_session ON ferry_refresh_tokens (session_id)",
                """
                CREATE TABLE ferry_spaces (
                  id TEXT PRIMARY KEY NOT NULL,
                  seq INTEGER NOT NULL DEFAULT 0,
                  owner_id TEXT REFERENCES ferry_users (id) ON DELETE CASCADE,
                  is_personal INTEGER NOT NULL DEFAULT 0,
                  created_at TEXT NOT NULL
                ) STRICT
                """,
            ],
            postgres: [
                """
                CREATE TABLE ferry_users (
                  id uuid PRIMARY KEY,
                  email text NOT NULL UNIQUE,
                  password_hash text NOT NULL,
                  user_metadata jsonb NOT NULL DEFAULT '{}',
                  created_at timestamptz NOT NULL,
                  updated_at timestamptz NOT NULL,
                  last_sign_in_at timestamptz
                )
                """,
                """
                CREATE TABLE ferry_sessions (
                  id uuid PRIMARY KEY,
                  user_id uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  created_at timestamptz NOT NULL,
                  refreshed_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX ferry_sessions_user ON ferry_sessions (user_id)",
                """
                CREATE TABLE ferry_refresh_tokens (
                  token_hash text PRIMARY KEY,
                  session_id uuid NOT NULL REFERENCES ferry_sessions (id) ON DELETE CASCADE,
                  parent_hash text,
                  created_at timestamptz NOT NULL,
                  revoked_at timestamptz
                )
                """,
                "CREATE INDEX ferry_refresh_tokens_session ON ferry_refresh_tokens (session_id)",
                """
                CREATE TABLE ferry_spaces (
                  id uuid PRIMARY KEY,
                  seq bigint NOT NULL DEFAULT 0,
                  owner_id uuid REFERENCES ferry_users (id) ON DELETE CASCADE,
                  is_personal boolean NOT NULL DEFAULT false,
                  created_at timestamptz NOT NULL
                )
                """,
            ]
        ),
    ]
}
