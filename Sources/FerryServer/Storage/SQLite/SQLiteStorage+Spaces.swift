import FerryCore
import Foundation
import GRDB

extension SQLiteStorage: SpaceStorage {
    public func spaces(userID: UUID, email: String, now: Date) async throws -> [SpaceSummary] {
        let email = email.lowercased()
        // Every push and pull looks up roles; only an invitation waiting for this address needs the writer.
        let hasInvitation = try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM ferry_invitations WHERE email = ? LIMIT 1", arguments: [email]) ?? false
        }
        if hasInvitation {
            try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO ferry_members (space_id, user_id, role, created_at)
                        SELECT space_id, ?, role, ? FROM ferry_invitations WHERE email = ?
                        ON CONFLICT (space_id, user_id) DO NOTHING
                        """,
                    arguments: [userID.databaseText, Timestamp.format(now), email]
                )
                try db.execute(sql: "DELETE FROM ferry_invitations WHERE email = ?", arguments: [email])
            }
        }
        return try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.name, s.is_personal, s.is_encrypted, s.seq, s.key_version, m.role FROM ferry_members m
                    JOIN ferry_spaces s ON s.id = m.space_id WHERE m.user_id = ? ORDER BY s.is_personal DESC, s.created_at, s.id
                    """,
                arguments: [userID.databaseText]
            ).compactMap { row in
                guard let id = UUID(uuidString: row["id"]), let role = SpaceRole(rawValue: row["role"]) else { return nil }
                return SpaceSummary(
                    id: id, name: row["name"], isPersonal: row["is_personal"], isEncrypted: row["is_encrypted"], role: role, seq: row["seq"],
                    keyVersion: row["key_version"]
                )
            }
        }
    }

    public func createSpace(id: UUID, name: String, isEncrypted: Bool, ownerID: UUID, now: Date) async throws {
        do {
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO ferry_spaces (id, owner_id, is_personal, name, is_encrypted, created_at) VALUES (?, ?, 0, ?, ?, ?)",
                    arguments: [id.databaseText, ownerID.databaseText, name, isEncrypted, Timestamp.format(now)]
                )
                try db.execute(
                    sql: "INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)",
                    arguments: [id.databaseText, ownerID.databaseText, Timestamp.format(now)]
                )
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw SpaceStorageError.spaceExists
        }
    }

    public func invite(space: UUID, email: String, role: SpaceRole, now: Date) async throws -> SpaceMember {
        let email = email.lowercased()
        return try await pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM ferry_spaces WHERE id = ?", arguments: [space.databaseText]) == true else {
                throw SpaceStorageError.spaceNotFound
            }
            if let userText = try String.fetchOne(db, sql: "SELECT id FROM ferry_users WHERE email = ?", arguments: [email]),
               let userID = UUID(uuidString: userText) {
                // The owner keeps ownership; anyone else gets the new role.
                try db.execute(
                    sql: """
                        INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role WHERE ferry_members.role <> 'owner'
                        """,
                    arguments: [space.databaseText, userID.databaseText, role.rawValue, Timestamp.format(now)]
                )
                let stored = try String.fetchOne(
                    db, sql: "SELECT role FROM ferry_members WHERE space_id = ? AND user_id = ?", arguments: [space.databaseText, userID.databaseText]
                ).flatMap(SpaceRole.init(rawValue:)) ?? role
                return SpaceMember(email: email, userId: userID, role: stored)
            }
            try db.execute(
                sql: """
                    INSERT INTO ferry_invitations (space_id, email, role, created_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (space_id, email) DO UPDATE SET role = excluded.role
                    """,
                arguments: [space.databaseText, email, role.rawValue, Timestamp.format(now)]
            )
            return SpaceMember(email: email, userId: nil, role: role)
        }
    }

    public func members(space: UUID) async throws -> [SpaceMember] {
        try await pool.read { db in
            let members = try Row.fetchAll(
                db,
                sql: """
                    SELECT u.email, u.id, m.role FROM ferry_members m JOIN ferry_users u ON u.id = m.user_id
                    WHERE m.space_id = ? ORDER BY u.email
                    """,
                arguments: [space.databaseText]
            ).compactMap { row -> SpaceMember? in
                guard let role = SpaceRole(rawValue: row["role"]) else { return nil }
                return SpaceMember(email: row["email"], userId: UUID(uuidString: row["id"]), role: role)
            }
            let invitations = try Row.fetchAll(
                db, sql: "SELECT email, role FROM ferry_invitations WHERE space_id = ? ORDER BY email", arguments: [space.databaseText]
            ).compactMap { row -> SpaceMember? in
                guard let role = SpaceRole(rawValue: row["role"]) else { return nil }
                return SpaceMember(email: row["email"], userId: nil, role: role)
            }
            return members + invitations
        }
    }
}
