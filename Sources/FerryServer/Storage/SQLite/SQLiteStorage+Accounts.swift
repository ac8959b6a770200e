import FerryCore
import FerryGRDB
import Foundation
import GRDB

extension SQLiteStorage: AccountStorage {
    func sharedMemberships(userID: UUID) async throws -> [SharedMembership] {
        try await pool.read { db in try Self.sharedMemberships(db, userID: userID) }
    }

    func deleteAccount(
        userID: UUID, collections: [CollectionDefinition], check: @Sendable ([SharedMembership]) throws -> Void
    ) async throws -> Set<UUID> {
        try await pool.write { db in
            let memberships = try Self.sharedMemberships(db, userID: userID)
            try check(memberships)
            let erased = memberships.soleMemberships.union([userID])
            let spaces = "[" + erased.map { "\"\($0.databaseText)\"" }.joined(separator: ",") + "]"
            for collection in collections {
                try db.execute(
                    sql: "DELETE FROM \(SQLDialect.sqlite.quote(collection.name)) WHERE _space IN (SELECT value FROM json_each(?))",
                    arguments: [spaces]
                )
            }
            try db.execute(sql: "DELETE FROM ferry_spaces WHERE id IN (SELECT value FROM json_each(?))", arguments: [spaces])
            // A space whose last owner goes (an admin's deletion; the account's own is refused first) passes to its
            // longest-standing member.
            try db.execute(
                sql: """
                    UPDATE ferry_members SET role = 'owner'
                      WHERE (space_id, user_id) IN (
                        SELECT m.space_id, (
                          SELECT x.user_id FROM ferry_members x WHERE x.space_id = m.space_id AND x.user_id <> ?1
                          ORDER BY x.created_at, x.user_id LIMIT 1
                        ) FROM ferry_members m WHERE m.user_id = ?1 AND m.role = 'owner' AND NOT EXISTS (
                          SELECT 1 FROM ferry_members o WHERE o.space_id = m.space_id AND o.user_id <> ?1 AND o.role = 'owner'
                        )
                      )
                    """,
                arguments: [userID.databaseText]
            )
            try db.execute(
                sql: """
                    UPDATE ferry_spaces SET owner_id = (
                      SELECT user_id FROM ferry_members m WHERE m.space_id = ferry_spaces.id AND m.user_id <> ?1 AND m.role = 'owner'
                      ORDER BY m.created_at, m.user_id LIMIT 1
                    ) WHERE owner_id = ?1
                    """,
                arguments: [userID.databaseText]
            )
            try db.execute(sql: "DELETE FROM ferry_users WHERE id = ?", arguments: [userID.databaseText])
            return erased
        }
    }

    private static func sharedMemberships(_ db: Database, userID: UUID) throws -> [SharedMembership] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT s.id, s.name, m.role,
                  (SELECT count(*) FROM ferry_members o WHERE o.space_id = s.id AND o.user_id <> ?1 AND o.role = 'owner') AS owners,
                  (SELECT count(*) FROM ferry_members o WHERE o.space_id = s.id AND o.user_id <> ?1) AS members
                FROM ferry_members m JOIN ferry_spaces s ON s.id = m.space_id
                WHERE m.user_id = ?1 AND s.is_personal = 0 ORDER BY s.created_at, s.id
                """,
            arguments: [userID.databaseText]
        ).compactMap { row in
            guard let id = UUID(wireText: row["id"]), let role = SpaceRole(rawValue: row["role"]) else { return nil }
            return SharedMembership(space: id, name: row["name"], role: role, otherOwners: row["owners"], otherMembers: row["members"])
        }
    }
}
