import Foundation
import PostgresNIO

extension PostgresStorage {
    private static let codeColumns = "user_id, purpose, email, code_hash, link_hash, created_at, expires_at, attempts"

    public func saveCode(_ code: EmailCodeRecord) async throws {
        try await client.query(
            """
            INSERT INTO ferry_email_codes (user_id, purpose, email, code_hash, link_hash, created_at, expires_at, attempts)
            VALUES (\(code.userID), \(code.purpose), \(code.email), \(code.codeHash), \(code.linkHash), \(code.createdAt), \(code.expiresAt), 0)
            ON CONFLICT (user_id, purpose) DO UPDATE SET email = excluded.email, code_hash = excluded.code_hash,
              link_hash = excluded.link_hash, created_at = excluded.created_at, expires_at = excluded.expires_at, attempts = 0
            """,
            logger: logger
        )
    }

    public func code(userID: UUID, purpose: String) async throws -> EmailCodeRecord? {
        try await Self.codes(try await client.query(
            "SELECT \(unescaped: Self.codeColumns) FROM ferry_email_codes WHERE user_id = \(userID) AND purpose = \(purpose)", logger: logger
        )).first
    }

    public func redeemCode(email: String, purposes: [String], codeHash: String, now: Date, maximumAttempts: Int) async throws -> EmailCodeRecord? {
        // Every try counts first (its own statement, committed), the right one too: tries at once cannot outrun the limit.
        try await client.query(
            "UPDATE ferry_email_codes SET attempts = attempts + 1 WHERE email = \(email) AND purpose = ANY (\(purposes))", logger: logger
        )
        return try await Self.codes(try await client.query(
            """
            DELETE FROM ferry_email_codes
            WHERE email = \(email) AND purpose = ANY (\(purposes)) AND code_hash = \(codeHash) AND expires_at > \(now)
              AND attempts <= \(maximumAttempts)
            RETURNING \(unescaped: Self.codeColumns)
            """,
            logger: logger
        )).first
    }

    public func redeemLink(linkHash: String, purposes: [String], now: Date) async throws -> EmailCodeRecord? {
        try await Self.codes(try await client.query(
            """
            DELETE FROM ferry_email_codes WHERE link_hash = \(linkHash) AND purpose = ANY (\(purposes)) AND expires_at > \(now)
            RETURNING \(unescaped: Self.codeColumns)
            """,
            logger: logger
        )).first
    }

    public func proveEmail(userID: UUID, now: Date, replacingPasswordHash: String?) async throws -> UserRecord? {
        try await client.withTransaction(logger: logger) { connection in
            let user = try await firstUser(try await connection.query(
                """
                UPDATE ferry_users SET email_confirmed_at = coalesce(email_confirmed_at, \(now)), email_proven = true,
                  password_hash = coalesce(\(replacingPasswordHash), password_hash)
                WHERE id = \(userID) RETURNING \(unescaped: Self.userColumns)
                """,
                logger: logger
            ))
            if replacingPasswordHash != nil {
                try await connection.query("DELETE FROM ferry_sessions WHERE user_id = \(userID)", logger: logger)
            }
            return user
        }
    }

    public func changeEmail(userID: UUID, to email: String, now: Date) async throws -> UserRecord? {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                let user = try await firstUser(try await connection.query(
                    """
                    UPDATE ferry_users SET email = \(email), email_confirmed_at = \(now), email_proven = true, updated_at = \(now)
                    WHERE id = \(userID) RETURNING \(unescaped: Self.userColumns)
                    """,
                    logger: logger
                ))
                try await connection.query(
                    "DELETE FROM ferry_email_codes WHERE user_id = \(userID) AND purpose <> 'email_change'", logger: logger
                )
                // The personal space is named after the address.
                try await connection.query("UPDATE ferry_spaces SET name = \(email) WHERE id = \(userID) AND is_personal", logger: logger)
                return user
            }
        } catch let error as PostgresTransactionError {
            if let psql = error.closureError as? PSQLError, psql.serverInfo?[.sqlState] == "23505" {
                throw AuthStorageError.emailTaken
            }
            throw error
        }
    }

    private static func codes(_ rows: PostgresRowSequence) async throws -> [EmailCodeRecord] {
        var codes: [EmailCodeRecord] = []
        for try await (userID, purpose, email, codeHash, linkHash, createdAt, expiresAt, attempts) in rows.decode(
            (UUID, String, String, String, String, Date, Date, Int).self
        ) {
            var code = EmailCodeRecord(
                userID: userID, purpose: purpose, email: email, codeHash: codeHash, linkHash: linkHash, createdAt: createdAt, expiresAt: expiresAt
            )
            code.attempts = attempts
            codes.append(code)
        }
        return codes
    }
}
