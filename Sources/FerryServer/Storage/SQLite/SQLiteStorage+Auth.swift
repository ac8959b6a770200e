import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    public func createUser(_ user: UserRecord, identity: IdentityRecord?) async throws {
        do {
            try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO ferry_users (id, email, password_hash, user_metadata, created_at, updated_at, email_confirmed_at, providers, email_proven)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        user.id.databaseText, user.email, user.passwordHash, user.userMetadata, user.createdAt, user.updatedAt,
                        user.emailConfirmedAt, user.providersText, user.isEmailProven,
                    ]
                )
                // Every user has a personal space whose id is the user's id.
                try db.execute(
                    sql: "INSERT INTO ferry_spaces (id, owner_id, is_personal, name, created_at) VALUES (?, ?, 1, ?, ?)",
                    arguments: [user.id.databaseText, user.id.databaseText, user.email, user.createdAt]
                )
                try db.execute(
                    sql: "INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)",
                    arguments: [user.id.databaseText, user.id.databaseText, user.createdAt]
                )
                if let identity { try Self.insert(identity, db) }
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw AuthStorageError.emailTaken
        }
    }

    public func user(email: String) async throws -> UserRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM ferry_users WHERE email = ?", arguments: [email]).map(UserRecord.init(row:))
        }
    }

    public func user(id: UUID) async throws -> UserRecord? {
        try await pool.read { db in try Self.user(db, id: id) }
    }

    public func updateUser(id: UUID, passwordHash: String?, metadataPatch: [String: JSONValue]?, now: Date) async throws -> UserRecord? {
        try await pool.write { db in
            // The write transaction holds the database, so no other update comes between the read and the write.
            guard let user = try Self.user(db, id: id) else { return nil }
            try db.execute(
                sql: "UPDATE ferry_users SET password_hash = coalesce(?, password_hash), user_metadata = ?, updated_at = ? WHERE id = ?",
                arguments: [passwordHash, metadataPatch.map(user.mergingMetadata) ?? user.userMetadata, now, id.databaseText]
            )
            return try Self.user(db, id: id)
        }
    }

    public func replacePasswordHash(userID: UUID, from old: String, to new: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE ferry_users SET password_hash = ? WHERE id = ? AND password_hash = ?",
                arguments: [new, userID.databaseText, old]
            )
            return db.changesCount > 0
        }
    }

    public func deleteUser(id: UUID) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM ferry_users WHERE id = ?", arguments: [id.databaseText])
        }
    }

    public func users(offset: Int, limit: Int) async throws -> (users: [UserRecord], total: Int) {
        try await pool.read { db in
            let users = try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_users ORDER BY created_at, id LIMIT ? OFFSET ?", arguments: [limit, offset]
            ).map(UserRecord.init(row:))
            return (users, try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_users") ?? 0)
        }
    }

    public func ban(userID: UUID, until: Date?, now: Date) async throws -> UserRecord? {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE ferry_users SET banned_until = ?, updated_at = ? WHERE id = ?", arguments: [until, now, userID.databaseText]
            )
            if let until, until > now {
                try db.execute(sql: "DELETE FROM ferry_sessions WHERE user_id = ?", arguments: [userID.databaseText])
            }
            return try Self.user(db, id: userID)
        }
    }

    public func createSession(_ session: SessionRecord, refreshTokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO ferry_sessions (id, user_id, created_at, refreshed_at) VALUES (?, ?, ?, ?)",
                arguments: [session.id.databaseText, session.userID.databaseText, session.createdAt, session.refreshedAt]
            )
            try db.execute(
                sql: "INSERT INTO ferry_refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                arguments: [refreshTokenHash, session.id.databaseText, session.createdAt]
            )
            try db.execute(
                sql: "UPDATE ferry_users SET last_sign_in_at = ? WHERE id = ?",
                arguments: [session.createdAt, session.userID.databaseText]
            )
        }
    }

    public func session(id: UUID) async throws -> SessionRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM ferry_sessions WHERE id = ?", arguments: [id.databaseText])
                .map(SessionRecord.init(row:))
        }
    }

    public func refresh(
        tokenHash: String, now: Date, decide: @Sendable (RefreshContext) -> RefreshDecision
    ) async throws -> (context: RefreshContext, decision: RefreshDecision)? {
        // The pool's single writer serialises refreshes, which is the lock the decision needs.
        try await pool.write { db in
            guard let token = try Row.fetchOne(
                db, sql: "SELECT * FROM ferry_refresh_tokens WHERE token_hash = ?", arguments: [tokenHash]
            ).map(RefreshTokenRecord.init(row:)),
                let session = try Row.fetchOne(
                    db, sql: "SELECT * FROM ferry_sessions WHERE id = ?", arguments: [token.sessionID.databaseText]
                ).map(SessionRecord.init(row:))
            else { return nil }
            let active = try Row.fetchOne(
                db,
                sql: "SELECT * FROM ferry_refresh_tokens WHERE session_id = ? AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1",
                arguments: [session.id.databaseText]
            ).map(RefreshTokenRecord.init(row:))
            let context = RefreshContext(token: token, session: session, activeToken: active)
            let decision = decide(context)
            switch decision {
            case .rotate(let successorHash):
                try db.execute(
                    sql: "UPDATE ferry_refresh_tokens SET revoked_at = ? WHERE token_hash = ?", arguments: [now, tokenHash]
                )
                try db.execute(
                    sql: "INSERT INTO ferry_refresh_tokens (token_hash, session_id, parent_hash, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [successorHash, session.id.databaseText, tokenHash, now]
                )
                try db.execute(
                    sql: "UPDATE ferry_sessions SET refreshed_at = ? WHERE id = ?", arguments: [now, session.id.databaseText]
                )
            case .reuseActiveToken:
                break
            case .revokeSession:
                try db.execute(sql: "DELETE FROM ferry_sessions WHERE id = ?", arguments: [session.id.databaseText])
            }
            return (context, decision)
        }
    }

    public func deleteSession(id: UUID) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM ferry_sessions WHERE id = ?", arguments: [id.databaseText])
        }
    }

    public func deleteSessions(userID: UUID, keeping: UUID?) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM ferry_sessions WHERE user_id = ? AND id IS NOT ?",
                arguments: [userID.databaseText, keeping?.databaseText]
            )
        }
    }

    static func user(_ db: Database, id: UUID) throws -> UserRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM ferry_users WHERE id = ?", arguments: [id.databaseText]).map(UserRecord.init(row:))
    }
}

extension UUID {
    /// The lowercase canonical form Ferry stores in SQLite text columns (GRDB's default is 16 bytes).
    var databaseText: String { lowercasedText }
}

extension UserRecord {
    init(row: Row) {
        self.init(
            id: UUID(wireText: row["id"])!, email: row["email"], passwordHash: row["password_hash"],
            userMetadata: row["user_metadata"], createdAt: row["created_at"], updatedAt: row["updated_at"],
            lastSignInAt: row["last_sign_in_at"], bannedUntil: row["banned_until"], emailConfirmedAt: row["email_confirmed_at"],
            isEmailProven: row["email_proven"], providers: UserRecord.providers(fromText: row["providers"])
        )
    }
}

extension SessionRecord {
    init(row: Row) {
        self.init(
            id: UUID(wireText: row["id"])!, userID: UUID(wireText: row["user_id"])!, createdAt: row["created_at"],
            refreshedAt: row["refreshed_at"], deviceID: (row["device_id"] as String?).flatMap(UUID.init(wireText:))
        )
    }
}

extension RefreshTokenRecord {
    init(row: Row) {
        self.init(
            tokenHash: row["token_hash"], sessionID: UUID(wireText: row["session_id"])!, parentHash: row["parent_hash"],
            createdAt: row["created_at"], revokedAt: row["revoked_at"]
        )
    }
}
