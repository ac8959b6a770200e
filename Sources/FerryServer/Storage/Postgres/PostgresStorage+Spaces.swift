import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: SpaceStorage {
    public func spaces(userID: UUID, email: String, now: Date) async throws -> [SpaceSummary] {
        let email = email.lowercased()
        try await client.query(
            """
            WITH claimed AS (DELETE FROM ferry_invitations WHERE email = \(email) RETURNING space_id, role)
            INSERT INTO ferry_members (space_id, user_id, role, created_at)
            SELECT space_id, \(userID), role, \(now) FROM claimed
            ON CONFLICT (space_id, user_id) DO NOTHING
            """,
            logger: logger
        )
        let rows = try await client.query(
            """
            SELECT s.id, s.name, s.is_personal, s.is_encrypted, s.seq, s.key_version, m.role FROM ferry_members m
            JOIN ferry_spaces s ON s.id = m.space_id WHERE m.user_id = \(userID) ORDER BY s.is_personal DESC, s.created_at, s.id
            """,
            logger: logger
        )
        var spaces: [SpaceSummary] = []
        for try await (id, name, isPersonal, isEncrypted, seq, keyVersion, role) in rows.decode((UUID, String, Bool, Bool, Int64, Int32, String).self) {
            guard let role = SpaceRole(rawValue: role) else { continue }
            spaces.append(SpaceSummary(
                id: id, name: name, isPersonal: isPersonal, isEncrypted: isEncrypted, role: role, seq: seq, keyVersion: Int(keyVersion)
            ))
        }
        return spaces
    }

    public func createSpace(id: UUID, name: String, isEncrypted: Bool, ownerID: UUID, now: Date) async throws {
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO ferry_spaces (id, owner_id, is_personal, name, is_encrypted, created_at)
                    VALUES (\(id), \(ownerID), false, \(name), \(isEncrypted), \(now))
                    """,
                    logger: logger
                )
                try await connection.query(
                    "INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (\(id), \(ownerID), 'owner', \(now))",
                    logger: logger
                )
            }
        } catch let error as PostgresTransactionError {
            if let psql = error.closureError as? PSQLError, psql.serverInfo?[.sqlState] == "23505" {
                throw SpaceStorageError.spaceExists
            }
            throw error
        }
    }

    public func invite(space: UUID, email: String, role: SpaceRole, now: Date) async throws -> SpaceMember {
        let email = email.lowercased()
        let exists = try await client.query("SELECT 1 FROM ferry_spaces WHERE id = \(space)", logger: logger)
        guard try await exists.decode(Int.self).first(where: { _ in true }) != nil else { throw SpaceStorageError.spaceNotFound }
        let users = try await client.query("SELECT id FROM ferry_users WHERE email = \(email)", logger: logger)
        if let userID = try await users.decode(UUID.self).first(where: { _ in true }) {
            let rows = try await client.query(
                """
                INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (\(space), \(userID), \(role.rawValue), \(now))
                ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role WHERE ferry_members.role <> 'owner'
                RETURNING role
                """,
                logger: logger
            )
            let stored = try await rows.decode(String.self).first(where: { _ in true }).flatMap(SpaceRole.init(rawValue:)) ?? .owner
            return SpaceMember(email: email, userId: userID, role: stored)
        }
        try await client.query(
            """
            INSERT INTO ferry_invitations (space_id, email, role, created_at) VALUES (\(space), \(email), \(role.rawValue), \(now))
            ON CONFLICT (space_id, email) DO UPDATE SET role = excluded.role
            """,
            logger: logger
        )
        return SpaceMember(email: email, userId: nil, role: role)
    }

    public func members(space: UUID) async throws -> [SpaceMember] {
        let rows = try await client.query(
            """
            SELECT email, user_id, role FROM (
              SELECT u.email, u.id AS user_id, m.role FROM ferry_members m JOIN ferry_users u ON u.id = m.user_id WHERE m.space_id = \(space)
              UNION ALL
              SELECT email, NULL, role FROM ferry_invitations WHERE space_id = \(space)
            ) entries ORDER BY user_id IS NULL, email
            """,
            logger: logger
        )
        var members: [SpaceMember] = []
        for try await (email, userID, role) in rows.decode((String, UUID?, String).self) {
            guard let role = SpaceRole(rawValue: role) else { continue }
            members.append(SpaceMember(email: email, userId: userID, role: role))
        }
        return members
    }
}
