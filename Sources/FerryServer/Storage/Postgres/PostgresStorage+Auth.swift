import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage {
    static let userColumns = """
        id, email, password_hash, user_metadata::text, created_at, updated_at, last_sign_in_at, banned_until, email_confirmed_at, providers,
        email_proven
        """

    public func createUser(_ user: UserRecord, identity: IdentityRecord?) async throws {
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO ferry_users (id, email, password_hash, user_metadata, created_at, updated_at, email_confirmed_at, providers, email_proven)
                    VALUES (\(user.id), \(user.email), \(user.passwordHash), \(user.userMetadata)::jsonb, \(user.createdAt), \(user.updatedAt),
                            \(user.emailConfirmedAt), \(user.providersText), \(user.isEmailProven))
                    """,
                    logger: logger
                )
                try await connection.query(
                    """
                    INSERT INTO ferry_spaces (id, owner_id, is_personal, name, created_at)
                    VALUES (\(user.id), \(user.id), true, \(user.email), \(user.createdAt))
                    """,
                    logger: logger
                )
                try await connection.query(
                    "INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (\(user.id), \(user.id), 'owner', \(user.createdAt))",
                    logger: logger
                )
                if let identity { try await Self.insert(identity, connection, logger: logger) }
            }
        } catch let error as PostgresTransactionError {
            if let psql = error.closureError as? PSQLError, psql.serverInfo?[.sqlState] == "23505" {
                throw AuthStorageError.emailTaken
            }
            throw error
        }
    }

    public func user(email: String) async throws -> UserRecord? {
        try await firstUser(try await client.query(
            "SELECT \(unescaped: Self.userColumns) FROM ferry_users WHERE email = \(email)", logger: logger
        ))
    }

    public func user(id: UUID) async throws -> UserRecord? {
        try await firstUser(try await client.query(
            "SELECT \(unescaped: Self.userColumns) FROM ferry_users WHERE id = \(id)", logger: logger
        ))
    }

    public func updateUser(id: UUID, passwordHash: String?, metadataPatch: [String: JSONValue]?, now: Date) async throws -> UserRecord? {
        try await client.withTransaction(logger: logger) { connection in
            // FOR UPDATE: a concurrent update waits here, then merges into this one's result.
            guard let user = try await firstUser(try await connection.query(
                "SELECT \(unescaped: Self.userColumns) FROM ferry_users WHERE id = \(id) FOR UPDATE", logger: logger
            )) else { return nil }
            let metadata = metadataPatch.map(user.mergingMetadata) ?? user.userMetadata
            return try await firstUser(try await connection.query(
                """
                UPDATE ferry_users SET password_hash = coalesce(\(passwordHash)::text, password_hash),
                  user_metadata = \(metadata)::jsonb, updated_at = \(now)
                WHERE id = \(id) RETURNING \(unescaped: Self.userColumns)
                """,
                logger: logger
            ))
        }
    }

    public func replacePasswordHash(userID: UUID, from old: String, to new: String) async throws -> Bool {
        let rows = try await client.query(
            "UPDATE ferry_users SET password_hash = \(new) WHERE id = \(userID) AND password_hash = \(old) RETURNING id", logger: logger
        )
        for try await _ in rows { return true }
        return false
    }

    public func deleteUser(id: UUID) async throws {
        try await client.query("DELETE FROM ferry_users WHERE id = \(id)", logger: logger)
    }

    public func createSession(_ session: SessionRecord, refreshTokenHash: String) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO ferry_sessions (id, user_id, created_at, refreshed_at)
                VALUES (\(session.id), \(session.userID), \(session.createdAt), \(session.refreshedAt))
                """,
                logger: logger
            )
            try await connection.query(
                "INSERT INTO ferry_refresh_tokens (token_hash, session_id, created_at) VALUES (\(refreshTokenHash), \(session.id), \(session.createdAt))",
                logger: logger
            )
            try await connection.query(
                "UPDATE ferry_users SET last_sign_in_at = \(session.createdAt) WHERE id = \(session.userID)", logger: logger
            )
        }
    }

    public func session(id: UUID) async throws -> SessionRecord? {
        let rows = try await client.query(
            "SELECT id, user_id, created_at, refreshed_at, device_id FROM ferry_sessions WHERE id = \(id)", logger: logger
        )
        for try await (id, userID, createdAt, refreshedAt, deviceID) in rows.decode((UUID, UUID, Date, Date, UUID?).self) {
            return SessionRecord(id: id, userID: userID, createdAt: createdAt, refreshedAt: refreshedAt, deviceID: deviceID)
        }
        return nil
    }

    public func refresh(
        tokenHash: String, now: Date, decide: @Sendable (RefreshContext) -> RefreshDecision
    ) async throws -> (context: RefreshContext, decision: RefreshDecision)? {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection -> (context: RefreshContext, decision: RefreshDecision)? in
                let byHash: PostgresQuery = "SELECT \(unescaped: Self.tokenColumns) FROM ferry_refresh_tokens WHERE token_hash = \(tokenHash)"
                guard let token = try await Self.refreshToken(connection, byHash, logger: logger) else { return nil }
                // Lock the session row: concurrent refreshes of one session run one after the other.
                var session: SessionRecord?
                for try await (id, userID, createdAt, refreshedAt) in try await connection.query(
                    "SELECT id, user_id, created_at, refreshed_at FROM ferry_sessions WHERE id = \(token.sessionID) FOR UPDATE",
                    logger: logger
                ).decode((UUID, UUID, Date, Date).self) {
                    session = SessionRecord(id: id, userID: userID, createdAt: createdAt, refreshedAt: refreshedAt)
                }
                guard let session else { return nil }
                // Re-read the token under the session lock: another refresh may have rotated it meanwhile.
                let current = try await Self.refreshToken(connection, byHash, logger: logger) ?? token
                let active = try await Self.refreshToken(
                    connection,
                    """
                    SELECT \(unescaped: Self.tokenColumns) FROM ferry_refresh_tokens
                    WHERE session_id = \(session.id) AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1
                    """,
                    logger: logger
                )
                let context = RefreshContext(token: current, session: session, activeToken: active)
                let decision = decide(context)
                switch decision {
                case .rotate(let successorHash):
                    try await connection.query(
                        "UPDATE ferry_refresh_tokens SET revoked_at = \(now) WHERE token_hash = \(tokenHash)", logger: logger
                    )
                    try await connection.query(
                        """
                        INSERT INTO ferry_refresh_tokens (token_hash, session_id, parent_hash, created_at)
                        VALUES (\(successorHash), \(session.id), \(tokenHash), \(now))
                        """,
                        logger: logger
                    )
                    try await connection.query("UPDATE ferry_sessions SET refreshed_at = \(now) WHERE id = \(session.id)", logger: logger)
                case .reuseActiveToken:
                    break
                case .revokeSession:
                    try await connection.query("DELETE FROM ferry_sessions WHERE id = \(session.id)", logger: logger)
                }
                return (context, decision)
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    public func deleteSession(id: UUID) async throws {
        try await client.query("DELETE FROM ferry_sessions WHERE id = \(id)", logger: logger)
    }

    public func deleteSessions(userID: UUID, keeping: UUID?) async throws {
        try await client.query(
            "DELETE FROM ferry_sessions WHERE user_id = \(userID) AND id IS DISTINCT FROM \(keeping)", logger: logger
        )
    }

    private static let tokenColumns = "token_hash, session_id, parent_hash, created_at, revoked_at"

    private static func refreshToken(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> RefreshTokenRecord? {
        let rows = try await connection.query(query, logger: logger)
        for try await (hash, sessionID, parent, createdAt, revokedAt) in rows.decode((String, UUID, String?, Date, Date?).self) {
            return RefreshTokenRecord(tokenHash: hash, sessionID: sessionID, parentHash: parent, createdAt: createdAt, revokedAt: revokedAt)
        }
        return nil
    }

    func firstUser(_ rows: PostgresRowSequence) async throws -> UserRecord? {
        try await users(rows).first
    }

    /// The rows of a query selecting ``userColumns``.
    func users(_ rows: PostgresRowSequence) async throws -> [UserRecord] {
        var users: [UserRecord] = []
        for try await (id, email, hash, metadata, createdAt, updatedAt, lastSignIn, bannedUntil, confirmedAt, providers, proven) in rows.decode(
            (UUID, String, String, String, Date, Date, Date?, Date?, Date?, String, Bool).self
        ) {
            users.append(UserRecord(
                id: id, email: email, passwordHash: hash, userMetadata: metadata,
                createdAt: createdAt, updatedAt: updatedAt, lastSignInAt: lastSignIn, bannedUntil: bannedUntil,
                emailConfirmedAt: confirmedAt, isEmailProven: proven, providers: UserRecord.providers(fromText: providers)
            ))
        }
        return users
    }

    public func users(offset: Int, limit: Int) async throws -> (users: [UserRecord], total: Int) {
        let page = try await users(try await client.query(
            "SELECT \(unescaped: Self.userColumns) FROM ferry_users ORDER BY created_at, id LIMIT \(limit) OFFSET \(offset)", logger: logger
        ))
        var total = 0
        for try await count in try await client.query("SELECT count(*) FROM ferry_users", logger: logger).decode(Int64.self) {
            total = Int(count)
        }
        return (page, total)
    }

    public func ban(userID: UUID, until: Date?, now: Date) async throws -> UserRecord? {
        let logger = self.logger
        return try await client.withTransaction(logger: logger) { connection in
            let user = try await users(try await connection.query(
                "UPDATE ferry_users SET banned_until = \(until), updated_at = \(now) WHERE id = \(userID) RETURNING \(unescaped: Self.userColumns)",
                logger: logger
            )).first
            if let until, until > now {
                try await connection.query("DELETE FROM ferry_sessions WHERE user_id = \(userID)", logger: logger)
            }
            return user
        }
    }
}
