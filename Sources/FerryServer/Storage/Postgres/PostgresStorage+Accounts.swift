import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: AccountStorage {
    func sharedMemberships(userID: UUID) async throws -> [SharedMembership] {
        let logger = self.logger
        return try await client.withConnection { connection in try await Self.sharedMemberships(connection, userID: userID, logger: logger) }
    }

    func deleteAccount(
        userID: UUID, collections: [CollectionDefinition], check: @Sendable ([SharedMembership]) throws -> Void
    ) async throws -> Set<UUID> {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                // The account's row serialises this with its joins and its spaces' membership changes.
                try await connection.query("SELECT id FROM ferry_users WHERE id = \(userID) FOR UPDATE", logger: logger)
                let memberships = try await Self.sharedMemberships(connection, userID: userID, logger: logger)
                try check(memberships)
                let erased = memberships.soleMemberships.union([userID])
                let spaces = Array(erased)
                for collection in collections {
                    var binds = PostgresBindings()
                    binds.append(spaces)
                    let sql = "DELETE FROM \(SQLDialect.postgres.quote(collection.name)) WHERE _space = ANY($1)"
                    try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                }
                // The blobs' rows and their parts in the same transaction: the spaces' rows would take the blobs'
                // with them (`ON DELETE CASCADE`) and leave their parts behind.
                try await connection.query(
                    """
                    WITH gone AS (DELETE FROM ferry_blobs WHERE space_id = ANY(\(spaces)) RETURNING content_id)
                    DELETE FROM ferry_blob_parts WHERE content_id IN (SELECT content_id FROM gone)
                    """,
                    logger: logger
                )
                try await connection.query("DELETE FROM ferry_spaces WHERE id = ANY(\(spaces))", logger: logger)
                // A space whose last owner goes (an admin's deletion; the account's own is refused first) passes to its
                // longest-standing member.
                try await connection.query(
                    """
                    UPDATE ferry_members SET role = 'owner'
                    WHERE (space_id, user_id) IN (
                      SELECT m.space_id, (
                        SELECT x.user_id FROM ferry_members x WHERE x.space_id = m.space_id AND x.user_id <> \(userID)
                        ORDER BY x.created_at, x.user_id LIMIT 1
                      ) FROM ferry_members m WHERE m.user_id = \(userID) AND m.role = 'owner' AND NOT EXISTS (
                        SELECT 1 FROM ferry_members o WHERE o.space_id = m.space_id AND o.user_id <> \(userID) AND o.role = 'owner'
                      )
                    )
                    """,
                    logger: logger
                )
                try await connection.query(
                    """
                    UPDATE ferry_spaces SET owner_id = (
                      SELECT user_id FROM ferry_members m WHERE m.space_id = ferry_spaces.id AND m.user_id <> \(userID) AND m.role = 'owner'
                      ORDER BY m.created_at, m.user_id LIMIT 1
                    ) WHERE owner_id = \(userID)
                    """,
                    logger: logger
                )
                try await connection.query("DELETE FROM ferry_users WHERE id = \(userID)", logger: logger)
                return erased
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    private static func sharedMemberships(
        _ connection: PostgresConnection, userID: UUID, logger: Logger
    ) async throws -> [SharedMembership] {
        let rows = try await connection.query(
            """
            SELECT s.id, s.name, m.role,
              (SELECT count(*) FROM ferry_members o WHERE o.space_id = s.id AND o.user_id <> \(userID) AND o.role = 'owner'),
              (SELECT count(*) FROM ferry_members o WHERE o.space_id = s.id AND o.user_id <> \(userID))
            FROM ferry_members m JOIN ferry_spaces s ON s.id = m.space_id
            WHERE m.user_id = \(userID) AND NOT s.is_personal ORDER BY s.created_at, s.id
            """,
            logger: logger
        )
        var memberships: [SharedMembership] = []
        for try await (id, name, role, owners, members) in rows.decode((UUID, String, String, Int64, Int64).self) {
            guard let role = SpaceRole(rawValue: role) else { continue }
            memberships.append(SharedMembership(space: id, name: name, role: role, otherOwners: Int(owners), otherMembers: Int(members)))
        }
        return memberships
    }
}
