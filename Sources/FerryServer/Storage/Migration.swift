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
            Migration(
            version: 3,
            name: "sync: space names, members, invitations, device mutation ids",
            sqlite: [
                "ALTER TABLE ferry_spaces ADD COLUMN name TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE ferry_spaces ADD COLUMN is_encrypted INTEGER NOT NULL DEFAULT 0",
                // Tombstones at or below this sequence number were purged; an older cursor must reset.
                "ALTER TABLE ferry_spaces ADD COLUMN purged_seq INTEGER NOT NULL DEFAULT 0",
                """
                CREATE TABLE ferry_members (
                  space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  user_id TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  role TEXT NOT NULL,
                  created_at TEXT NOT NULL,
                  PRIMARY KEY (space_id, user_id)
                ) STRICT
                """,
                "CREATE INDEX ferry_members_user ON ferry_members (user_id)",
                """
                CREATE TABLE ferry_invitations (
                  space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  email TEXT NOT NULL,
                  role TEXT NOT NULL,
                  created_at TEXT NOT NULL,
                  PRIMARY KEY (space_id, email)
                ) STRICT
                """,
                "CREATE INDEX ferry_invitations_email ON ferry_invitations (email)",
                """
                CREATE TABLE ferry_device_mutations (
                  user_id TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  device_id TEXT NOT NULL,
                  last_mutation_id INTEGER NOT NULL,
                  updated_at TEXT NOT NULL,
                  PRIMARY KEY (user_id, device_id)
                ) STRICT
                """,
                """
                INSERT INTO ferry_members (space_id, user_id, role, created_at)
                SELECT s.id, s.owner_id, 'owner', s.created_at FROM ferry_spaces s WHERE s.owner_id IS NOT NULL
                """,
                "UPDATE ferry_spaces SET name = (SELECT email FROM ferry_users u WHERE u.id = ferry_spaces.owner_id) WHERE is_personal = 1",
            ],
            postgres: [
                "ALTER TABLE ferry_spaces ADD COLUMN name text NOT NULL DEFAULT ''",
                "ALTER TABLE ferry_spaces ADD COLUMN is_encrypted boolean NOT NULL DEFAULT false",
                "ALTER TABLE ferry_spaces ADD COLUMN purged_seq bigint NOT NULL DEFAULT 0",
                """
                CREATE TABLE ferry_members (
                  space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  user_id uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  role text NOT NULL,
                  created_at timestamptz NOT NULL,
                  PRIMARY KEY (space_id, user_id)
                )
                """,
                "CREATE INDEX ferry_members_user ON ferry_members (user_id)",
                """
                CREATE TABLE ferry_invitations (
                  space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  email text NOT NULL,
                  role text NOT NULL,
                  created_at timestamptz NOT NULL,
                  PRIMARY KEY (space_id, email)
                )
                """,
                "CREATE INDEX ferry_invitations_email ON ferry_invitations (email)",
                """
                CREATE TABLE ferry_device_mutations (
                  user_id uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  device_id uuid NOT NULL,
                  last_mutation_id bigint NOT NULL,
                  updated_at timestamptz NOT NULL,
                  PRIMARY KEY (user_id, device_id)
                )
                """,
                """
                INSERT INTO ferry_members (space_id, user_id, role, created_at)
                SELECT s.id, s.owner_id, 'owner', s.created_at FROM ferry_spaces s WHERE s.owner_id IS NOT NULL
                """,
                "UPDATE ferry_spaces s SET name = u.email FROM ferry_users u WHERE u.id = s.owner_id AND s.is_personal",
            ]
        ),
        Migration(
            version: 4,
            name: "devices, trust, sealed space keys",
            sqlite: [
                """
                CREATE TABLE ferry_devices (
                  id TEXT PRIMARY KEY NOT NULL,
                  user_id TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  name TEXT NOT NULL,
                  type TEXT NOT NULL,
                  hostname TEXT NOT NULL,
                  public_key TEXT NOT NULL,
                  push_token TEXT,
                  push_environment TEXT,
                  trust TEXT NOT NULL CHECK (trust IN ('pending', 'trusted', 'revoked')),
                  created_at TEXT NOT NULL,
                  last_seen_at TEXT NOT NULL,
                  revoked_at TEXT
                ) STRICT
                """,
                "CREATE INDEX ferry_devices_user ON ferry_devices (user_id)",
                // The device a session is bound to (PUT /sync/v1/devices/{id}); NULL for a session that never registered one.
                "ALTER TABLE ferry_sessions ADD COLUMN device_id TEXT REFERENCES ferry_devices (id) ON DELETE CASCADE",
                "CREATE INDEX ferry_sessions_device ON ferry_sessions (device_id)",
                "ALTER TABLE ferry_spaces ADD COLUMN key_version INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE ferry_spaces ADD COLUMN rotation_required INTEGER NOT NULL DEFAULT 0",
                """
                CREATE TABLE ferry_space_keys (
                  space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  version INTEGER NOT NULL,
                  created_by_device TEXT NOT NULL,
                  created_at TEXT NOT NULL,
                  PRIMARY KEY (space_id, version)
                ) STRICT
                """,
                """
                CREATE TABLE ferry_secrets (
                  space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  device_id TEXT NOT NULL REFERENCES ferry_devices (id) ON DELETE CASCADE,
                  key_version INTEGER NOT NULL,
                  enc TEXT NOT NULL,
                  ciphertext TEXT NOT NULL,
                  sealed_by TEXT NOT NULL,
                  updated_at TEXT NOT NULL,
                  PRIMARY KEY (space_id, device_id, key_version)
                ) STRICT
                """,
                "CREATE INDEX ferry_secrets_device ON ferry_secrets (device_id)",
            ],
            postgres: [
                """
                CREATE TABLE ferry_devices (
                  id uuid PRIMARY KEY,
                  user_id uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  name text NOT NULL,
                  type text NOT NULL,
                  hostname text NOT NULL,
                  public_key text NOT NULL,
                  push_token text,
                  push_environment text,
                  trust text NOT NULL CHECK (trust IN ('pending', 'trusted', 'revoked')),
                  created_at timestamptz NOT NULL,
                  last_seen_at timestamptz NOT NULL,
                  revoked_at timestamptz
                )
                """,
                "CREATE INDEX ferry_devices_user ON ferry_devices (user_id)",
                "ALTER TABLE ferry_sessions ADD COLUMN device_id uuid REFERENCES ferry_devices (id) ON DELETE CASCADE",
                "CREATE INDEX ferry_sessions_device ON ferry_sessions (device_id)",
                "ALTER TABLE ferry_spaces ADD COLUMN key_version integer NOT NULL DEFAULT 0",
                "ALTER TABLE ferry_spaces ADD COLUMN rotation_required boolean NOT NULL DEFAULT false",
                """
                CREATE TABLE ferry_space_keys (
                  space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  version integer NOT NULL,
                  created_by_device uuid NOT NULL,
                  created_at timestamptz NOT NULL,
                  PRIMARY KEY (space_id, version)
                )
                """,
                """
                CREATE TABLE ferry_secrets (
                  space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  device_id uuid NOT NULL REFERENCES ferry_devices (id) ON DELETE CASCADE,
                  key_version integer NOT NULL,
                  enc text NOT NULL,
                  ciphertext text NOT NULL,
                  sealed_by uuid NOT NULL,
                  updated_at timestamptz NOT NULL,
                  PRIMARY KEY (space_id, device_id, key_version)
                )
                """,
                "CREATE INDEX ferry_secrets_device ON ferry_secrets (device_id)",
            ]
        ),
        Migration(
            version: 5,
            name: "fingerprints of each device's last push",
            // A replayed mutation id answers `duplicate` only when the write matches the one processed under it.
            sqlite: ["ALTER TABLE ferry_device_mutations ADD COLUMN last_batch BLOB"],
            postgres: ["ALTER TABLE ferry_device_mutations ADD COLUMN last_batch bytea"]
        ),
        Migration(
            version: 6,
            name: "invitation codes",
            // Invitations were claimed by whoever signed up with the address; they become single-use codes. Nobody
            // holds a code for an old invitation, so those are dropped: their senders invite again.
            sqlite: [
                "DROP TABLE ferry_invitations",
                """
                CREATE TABLE ferry_space_invitations (
                  id TEXT PRIMARY KEY NOT NULL,
                  space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  code_hash BLOB NOT NULL UNIQUE,
                  email TEXT NOT NULL,
                  role TEXT NOT NULL,
                  invited_by TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  created_at TEXT NOT NULL,
                  expires_at TEXT NOT NULL,
                  accepted_by TEXT REFERENCES ferry_users (id) ON DELETE SET NULL,
                  accepted_at TEXT,
                  revoked_at TEXT
                ) STRICT
                """,
                "CREATE INDEX ferry_space_invitations_space ON ferry_space_invitations (space_id)",
                "CREATE INDEX ferry_space_invitations_sender ON ferry_space_invitations (invited_by)",
            ],
            postgres: [
                "DROP TABLE ferry_invitations",
                """
                CREATE TABLE ferry_space_invitations (
                  id uuid PRIMARY KEY,
                  space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  code_hash bytea NOT NULL UNIQUE,
                  email text NOT NULL,
                  role text NOT NULL,
                  invited_by uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  created_at timestamptz NOT NULL,
                  expires_at timestamptz NOT NULL,
                  accepted_by uuid REFERENCES ferry_users (id) ON DELETE SET NULL,
                  accepted_at timestamptz,
                  revoked_at timestamptz
                )
                """,
                "CREATE INDEX ferry_space_invitations_space ON ferry_space_invitations (space_id)",
                "CREATE INDEX ferry_space_invitations_sender ON ferry_space_invitations (invited_by)",
            ]
        ),
        Migration(
            version: 7,
            name: "blobs",
            // On SQLite the bytes are files under the data folder (FileBlobStore); PostgreSQL keeps them in parts,
            // so every instance of a scaled-out server shares them. Parts belong to a content id, which an upload holds
            // while it runs and its blob takes over when it completes: every byte is written once.
            sqlite: [],
            postgres: [
                """
                CREATE TABLE ferry_blob_parts (
                  content_id uuid NOT NULL,
                  part_offset bigint NOT NULL,
                  data bytea NOT NULL,
                  PRIMARY KEY (content_id, part_offset)
                )
                """,
                """
                CREATE TABLE ferry_blobs (
                  space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
                  sha256 text NOT NULL,
                  size bigint NOT NULL,
                  content_id uuid NOT NULL,
                  created_at timestamptz NOT NULL,
                  PRIMARY KEY (space_id, sha256)
                )
                """,
                "CREATE INDEX ferry_blobs_content ON ferry_blobs (content_id)",
                """
                CREATE TABLE ferry_blob_uploads (
                  id text PRIMARY KEY,
                  content_id uuid NOT NULL,
                  length bigint NOT NULL,
                  received bigint NOT NULL,
                  updated_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX ferry_blob_uploads_content ON ferry_blob_uploads (content_id)",
                // Parts are written once and read back whole: no point compressing audio and video again.
                "ALTER TABLE ferry_blob_parts ALTER COLUMN data SET STORAGE EXTERNAL",
            ]
        ),
        .objects,
        Migration(
            version: 9,
            name: "device progress stored uncompressed",
            // Every push rewrites the device's 48 KB of fingerprints, which do not compress: PostgreSQL's attempt to
            // compress them was a seventh of its time in a push.
            sqlite: [],
            postgres: ["ALTER TABLE ferry_device_mutations ALTER COLUMN last_batch SET STORAGE EXTERNAL"]
        ),
        Migration(
            version: 10,
            name: "record clocks stored as text",
            // Only Ferry reads `_clocks`: as jsonb it cost a parse on every pushed row and an escape of every character
            // on every pulled one. Every collection table is converted once (its rows keep jsonb's spaced output, which
            // ClockMap reads); being a migration, it also stops an older server, whose profile save merges the column
            // with jsonb's `||`, from running against the converted tables. SQLite's was always text.
            sqlite: [],
            postgres: [
                """
                DO $$
                DECLARE found record;
                BEGIN
                  FOR found IN SELECT table_name FROM information_schema.columns
                               WHERE table_schema = current_schema() AND column_name = '_clocks' AND data_type = 'jsonb'
                  LOOP
                    EXECUTE format('ALTER TABLE %I ALTER COLUMN "_clocks" DROP DEFAULT, '
                      || 'ALTER COLUMN "_clocks" TYPE text USING "_clocks"::text, ALTER COLUMN "_clocks" SET DEFAULT ''{}''',
                      found.table_name);
                  END LOOP;
                END $$
                """,
            ]
        ),
        Migration(
            version: 11,
            name: "fingerprints in a row per push",
            // Every push read and rewrote the device's 96 KiB of fingerprints, though only a replay reads them. Each
            // push now inserts its own and drops those out of the window; the blobs kept so far move over as they are
            // (the same 24-byte entries, in id order).
            sqlite: [
                """
                CREATE TABLE ferry_device_batches (
                  user_id TEXT NOT NULL,
                  device_id TEXT NOT NULL,
                  last_mutation_id INTEGER NOT NULL,
                  fingerprints BLOB NOT NULL,
                  PRIMARY KEY (user_id, device_id, last_mutation_id),
                  FOREIGN KEY (user_id, device_id) REFERENCES ferry_device_mutations (user_id, device_id) ON DELETE CASCADE
                ) STRICT
                """,
                """
                INSERT INTO ferry_device_batches (user_id, device_id, last_mutation_id, fingerprints)
                SELECT user_id, device_id, last_mutation_id, last_batch FROM ferry_device_mutations WHERE length(last_batch) > 0
                """,
                "UPDATE ferry_device_mutations SET last_batch = NULL",
            ],
            postgres: [
                """
                CREATE TABLE ferry_device_batches (
                  user_id uuid NOT NULL,
                  device_id uuid NOT NULL,
                  last_mutation_id bigint NOT NULL,
                  fingerprints bytea NOT NULL,
                  PRIMARY KEY (user_id, device_id, last_mutation_id),
                  FOREIGN KEY (user_id, device_id) REFERENCES ferry_device_mutations (user_id, device_id) ON DELETE CASCADE
                )
                """,
                "ALTER TABLE ferry_device_batches ALTER COLUMN fingerprints SET STORAGE EXTERNAL",
                """
                INSERT INTO ferry_device_batches (user_id, device_id, last_mutation_id, fingerprints)
                SELECT user_id, device_id, last_mutation_id, last_batch FROM ferry_device_mutations WHERE length(last_batch) > 0
                """,
                "UPDATE ferry_device_mutations SET last_batch = NULL",
            ]
        ),
        Migration(
            version: 12,
            name: "record clocks with a row clock",
            // Nothing to convert: rows written before keep one clock per field, which still reads. From now on rows are
            // written with a row clock (`*`, ClockMap.storedText), which an older ferry would take for a field's clock:
            // the version alone makes older binaries refuse the database.
            sqlite: [],
            postgres: []
        ),
        Migration(
            version: 13,
            name: "storage usage by owner",
            // Quotas sum an account's objects and open uploads at every upload (docs/security.md, "Limits").
            sqlite: [
                "CREATE INDEX ferry_objects_owner ON ferry_objects (owner_id)",
                "CREATE INDEX ferry_object_uploads_owner ON ferry_object_uploads (owner_id)",
            ],
            postgres: [
                "CREATE INDEX ferry_objects_owner ON ferry_objects (owner_id)",
                "CREATE INDEX ferry_object_uploads_owner ON ferry_object_uploads (owner_id)",
            ]
        ),
        Migration(
            version: 14,
            name: "users: bans",
            // An admin's ban (`PUT /auth/v1/admin/users/{id}` with `ban_duration`): sign-in is refused until then.
            sqlite: ["ALTER TABLE ferry_users ADD COLUMN banned_until TEXT"],
            postgres: ["ALTER TABLE ferry_users ADD COLUMN banned_until timestamptz"]
        ),
        Migration(
            version: 15,
            name: "users: confirmed addresses, Apple identities, mailed codes",
            // Sign-up with mail set up confirms the address later; Sign in with Apple links an Apple subject to a user;
            // mailed one-time codes (sign-up, sign-in, recovery, address change) are kept hashed, one per user and purpose.
            sqlite: [
                "ALTER TABLE ferry_users ADD COLUMN email_confirmed_at TEXT",
                "UPDATE ferry_users SET email_confirmed_at = created_at",
                "ALTER TABLE ferry_users ADD COLUMN providers TEXT NOT NULL DEFAULT 'email'",
                // Whether the address was proven (a mailed code came back, Apple vouched, an admin said so), not merely
                // taken at sign-up: a password set on an unproven address may be a squatter's.
                "ALTER TABLE ferry_users ADD COLUMN email_proven INTEGER NOT NULL DEFAULT 0",
                """
                CREATE TABLE ferry_identities (
                  provider TEXT NOT NULL,
                  subject TEXT NOT NULL,
                  user_id TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  email TEXT,
                  data TEXT NOT NULL DEFAULT '{}',
                  created_at TEXT NOT NULL,
                  updated_at TEXT NOT NULL,
                  PRIMARY KEY (provider, subject)
                ) STRICT
                """,
                "CREATE INDEX ferry_identities_user ON ferry_identities (user_id)",
                """
                CREATE TABLE ferry_email_codes (
                  user_id TEXT NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  purpose TEXT NOT NULL,
                  email TEXT NOT NULL,
                  code_hash TEXT NOT NULL,
                  link_hash TEXT NOT NULL UNIQUE,
                  created_at TEXT NOT NULL,
                  expires_at TEXT NOT NULL,
                  attempts INTEGER NOT NULL DEFAULT 0,
                  PRIMARY KEY (user_id, purpose)
                ) STRICT
                """,
                "CREATE INDEX ferry_email_codes_email ON ferry_email_codes (email, purpose)",
            ],
            postgres: [
                "ALTER TABLE ferry_users ADD COLUMN email_confirmed_at timestamptz",
                "UPDATE ferry_users SET email_confirmed_at = created_at",
                "ALTER TABLE ferry_users ADD COLUMN providers text NOT NULL DEFAULT 'email'",
                "ALTER TABLE ferry_users ADD COLUMN email_proven boolean NOT NULL DEFAULT false",
                """
                CREATE TABLE ferry_identities (
                  provider text NOT NULL,
                  subject text NOT NULL,
                  user_id uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  email text,
                  data jsonb NOT NULL DEFAULT '{}',
                  created_at timestamptz NOT NULL,
                  updated_at timestamptz NOT NULL,
                  PRIMARY KEY (provider, subject)
                )
                """,
                "CREATE INDEX ferry_identities_user ON ferry_identities (user_id)",
                """
                CREATE TABLE ferry_email_codes (
                  user_id uuid NOT NULL REFERENCES ferry_users (id) ON DELETE CASCADE,
                  purpose text NOT NULL,
                  email text NOT NULL,
                  code_hash text NOT NULL,
                  link_hash text NOT NULL UNIQUE,
                  created_at timestamptz NOT NULL,
                  expires_at timestamptz NOT NULL,
                  attempts integer NOT NULL DEFAULT 0,
                  PRIMARY KEY (user_id, purpose)
                )
                """,
                "CREATE INDEX ferry_email_codes_email ON ferry_email_codes (email, purpose)",
            ]
        ),
        Migration(
            version: 16,
            name: "devices: background notifications",
            // One waiting APNs notification per device at most, claimed with a lease so that one instance sends it; and
            // until when a device holds an open stream (renewed while it does), which makes a notification needless.
            sqlite: [
                "ALTER TABLE ferry_devices ADD COLUMN streaming_until TEXT",
                """
                CREATE TABLE ferry_notification_queue (
                  device_id TEXT PRIMARY KEY NOT NULL REFERENCES ferry_devices (id) ON DELETE CASCADE,
                  space_id TEXT NOT NULL,
                  seq INTEGER NOT NULL,
                  pending INTEGER NOT NULL,
                  version INTEGER NOT NULL,
                  due_at TEXT NOT NULL,
                  next_allowed_at TEXT,
                  lease_until TEXT,
                  attempts INTEGER NOT NULL DEFAULT 0
                ) STRICT
                """,
                "CREATE INDEX ferry_notification_queue_due ON ferry_notification_queue (due_at) WHERE pending = 1",
                // A token moves to the device that registers it last: found by an index, not a scan of every device.
                "CREATE INDEX ferry_devices_push_token ON ferry_devices (push_token) WHERE push_token IS NOT NULL",
                // Tokens go into APNs' URL path: ones stored before tokens had to be hexadecimal are dropped.
                """
                UPDATE ferry_devices SET push_token = NULL, push_environment = NULL
                WHERE push_token IS NOT NULL AND (push_token GLOB '*[^0-9a-fA-F]*' OR length(push_token) % 2 = 1 OR length(push_token) < 16)
                """,
            ],
            postgres: [
                "ALTER TABLE ferry_devices ADD COLUMN streaming_until timestamptz",
                """
                CREATE TABLE ferry_notification_queue (
                  device_id uuid PRIMARY KEY REFERENCES ferry_devices (id) ON DELETE CASCADE,
                  space_id uuid NOT NULL,
                  seq bigint NOT NULL,
                  pending boolean NOT NULL,
                  version integer NOT NULL,
                  due_at timestamptz NOT NULL,
                  next_allowed_at timestamptz,
                  lease_until timestamptz,
                  attempts integer NOT NULL DEFAULT 0
                )
                """,
                "CREATE INDEX ferry_notification_queue_due ON ferry_notification_queue (due_at) WHERE pending",
                "CREATE INDEX ferry_devices_push_token ON ferry_devices (push_token) WHERE push_token IS NOT NULL",
                """
                UPDATE ferry_devices SET push_token = NULL, push_environment = NULL
                WHERE push_token !~ '^[0-9a-fA-F]+$' OR length(push_token) % 2 = 1 OR length(push_token) < 16
                """,
            ]
        ),
        Migration(
            version: 17,
            name: "operators and the console",
            // Operators are not app users: a table, sessions and a log of their own. A space notes when it last changed,
            // in the statement that already takes its sequence numbers.
            sqlite: [
                """
                CREATE TABLE ferry_operators (
                  id TEXT PRIMARY KEY NOT NULL,
                  email TEXT NOT NULL UNIQUE,
                  password_hash TEXT NOT NULL,
                  created_at TEXT NOT NULL,
                  updated_at TEXT NOT NULL,
                  last_sign_in_at TEXT
                ) STRICT
                """,
                """
                CREATE TABLE ferry_operator_sessions (
                  token_hash TEXT PRIMARY KEY NOT NULL,
                  operator_id TEXT NOT NULL REFERENCES ferry_operators (id) ON DELETE CASCADE,
                  created_at TEXT NOT NULL,
                  last_used_at TEXT NOT NULL
                ) STRICT
                """,
                "CREATE INDEX ferry_operator_sessions_operator ON ferry_operator_sessions (operator_id)",
                """
                CREATE TABLE ferry_operator_log (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  at TEXT NOT NULL,
                  operator TEXT NOT NULL,
                  action TEXT NOT NULL,
                  target TEXT NOT NULL
                ) STRICT
                """,
                "ALTER TABLE ferry_spaces ADD COLUMN changed_at TEXT",
            ],
            postgres: [
                """
                CREATE TABLE ferry_operators (
                  id uuid PRIMARY KEY,
                  email text NOT NULL UNIQUE,
                  password_hash text NOT NULL,
                  created_at timestamptz NOT NULL,
                  updated_at timestamptz NOT NULL,
                  last_sign_in_at timestamptz
                )
                """,
                """
                CREATE TABLE ferry_operator_sessions (
                  token_hash text PRIMARY KEY,
                  operator_id uuid NOT NULL REFERENCES ferry_operators (id) ON DELETE CASCADE,
                  created_at timestamptz NOT NULL,
                  last_used_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX ferry_operator_sessions_operator ON ferry_operator_sessions (operator_id)",
                """
                CREATE TABLE ferry_operator_log (
                  id bigserial PRIMARY KEY,
                  at timestamptz NOT NULL,
                  operator text NOT NULL,
                  action text NOT NULL,
                  target text NOT NULL
                )
                """,
                "ALTER TABLE ferry_spaces ADD COLUMN changed_at timestamptz",
            ]
        ),
        Migration(
            version: 18,
            name: "where blobs live",
            // PostgreSQL keeps its blobs in the database or in a folder (`--blob-dir`); the first start records which
            // (BlobLocation), so a later one with the other cannot lose them. A database that already holds blobs holds
            // them itself. On SQLite they are always files in the data folder.
            sqlite: [],
            postgres: [
                "CREATE TABLE ferry_settings (name text PRIMARY KEY, value text NOT NULL)",
                """
                INSERT INTO ferry_settings (name, value) SELECT 'blob_store', 'database'
                WHERE EXISTS (SELECT 1 FROM ferry_blobs) OR EXISTS (SELECT 1 FROM ferry_blob_uploads)
                """,
            ]
        ),
    ]
}
