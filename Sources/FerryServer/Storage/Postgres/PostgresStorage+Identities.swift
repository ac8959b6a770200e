import Foundation
import Logging
import PostgresNIO

extension PostgresStorage {
    private static let identityColumns = "provider, subject, user_id, email, data::text, created_at, updated_at"

    public func identity(provider: String, subject: String) async throws -> (identity: IdentityRecord, user: UserRecord)? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.identityColumns) FROM ferry_identities WHERE provider = \(provider) AND subject = \(subject)",
            logger: logger
        )
        guard let identity = try await Self.identities(rows).first, let user = try await user(id: identity.userID) else { return nil }
        return (identity, user)
    }

    public func link(_ identity: IdentityRecord) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await Self.insert(identity, connection, logger: logger)
            // Appends the provider once; the row lock of the UPDATE orders concurrent links.
            try await connection.query(
                """
                UPDATE ferry_users SET providers = providers || ',' || \(identity.provider), updated_at = \(identity.updatedAt)
                WHERE id = \(identity.userID) AND NOT (\(identity.provider) = ANY (string_to_array(providers, ',')))
                """,
                logger: logger
            )
        }
    }

    public func updateIdentity(provider: String, subject: String, email: String?, data: String, now: Date) async throws -> IdentityRecord? {
        let rows = try await client.query(
            """
            UPDATE ferry_identities SET email = \(email), data = \(data)::jsonb, updated_at = \(now)
            WHERE provider = \(provider) AND subject = \(subject) RETURNING \(unescaped: Self.identityColumns)
            """,
            logger: logger
        )
        return try await Self.identities(rows).first
    }

    public func deleteSessions(userID: UUID, startedBefore date: Date) async throws {
        try await client.query("DELETE FROM ferry_sessions WHERE user_id = \(userID) AND created_at < \(date)", logger: logger)
    }

    static func insert(_ identity: IdentityRecord, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO ferry_identities (provider, subject, user_id, email, data, created_at, updated_at)
            VALUES (\(identity.provider), \(identity.subject), \(identity.userID), \(identity.email), \(identity.data)::jsonb,
                    \(identity.createdAt), \(identity.updatedAt))
            """,
            logger: logger
        )
    }

    private static func identities(_ rows: PostgresRowSequence) async throws -> [IdentityRecord] {
        var identities: [IdentityRecord] = []
        for try await (provider, subject, userID, email, data, createdAt, updatedAt) in rows.decode(
            (String, String, UUID, String?, String, Date, Date).self
        ) {
            identities.append(IdentityRecord(
                provider: provider, subject: subject, userID: userID, email: email, data: data, createdAt: createdAt, updatedAt: updatedAt
            ))
        }
        return identities
    }
}
