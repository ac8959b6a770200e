import FerryCore
import Foundation
import GRDB

extension SQLiteStorage: SpaceStorage {
    func spaces(userID: UUID) async throws -> [SpaceSummary] {
        try await pool.read { db in try Self.spaces(db, userID: userID) }
    }

    static func spaces(_ db: Database, userID: UUID) throws -> [SpaceSummary] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT s.id, s.name, s.is_personal, s.is_encrypted, s.seq, s.key_version, m.role FROM ferry_members m
                JOIN ferry_spaces s ON s.id = m.space_id WHERE m.user_id = ? ORDER BY s.is_personal DESC, s.created_at, s.id
                """,
            arguments: [userID.databaseText]
        ).compactMap { row in
            guard let id = UUID(wireText: row["id"]), let role = SpaceRole(rawValue: row["role"]) else { return nil }
            return SpaceSummary(
                id: id, name: row["name"], isPersonal: row["is_personal"], isEncrypted: row["is_encrypted"], role: role, seq: row["seq"],
                keyVersion: row["key_version"]
            )
        }
    }

    func createSpace(id: UUID, name: String, isEncrypted: Bool, ownerID: UUID, now: Date, maximumSpaces: Int) async throws {
        do {
            try await pool.write { db in
                guard try Self.spaceCount(db, userID: ownerID) < maximumSpaces else { throw SpaceStorageError.tooManySpaces }
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

    func createInvitation(_ invitation: SpaceInvitation, codeHash: Data, maximumPending: Int, now: Date) async throws {
        try await pool.write { db in
            let pending = try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM ferry_space_invitations
                    WHERE invited_by = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?
                    """,
                arguments: [invitation.invitedBy.databaseText, Timestamp.format(now)]
            ) ?? 0
            guard pending < maximumPending else { throw SpaceStorageError.tooManyInvitations }
            try db.execute(
                sql: """
                    INSERT INTO ferry_space_invitations (id, space_id, code_hash, email, role, invited_by, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    invitation.id.databaseText, invitation.spaceId.databaseText, codeHash, invitation.email, invitation.role.rawValue,
                    invitation.invitedBy.databaseText, Timestamp.format(invitation.createdAt), Timestamp.format(invitation.expiresAt),
                ]
            )
        }
    }

    func invitations(space: UUID, now: Date) async throws -> [SpaceInvitation] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.invitationColumns) FROM ferry_space_invitations
                    WHERE space_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at, id
                    """,
                arguments: [space.databaseText, Timestamp.format(now)]
            ).compactMap { Self.invitation($0)?.invitation }
        }
    }

    func revokeInvitation(space: UUID, id: UUID, now: Date) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE ferry_space_invitations SET revoked_at = ?
                    WHERE id = ? AND space_id = ? AND accepted_at IS NULL AND revoked_at IS NULL
                    """,
                arguments: [Timestamp.format(now), id.databaseText, space.databaseText]
            )
            return db.changesCount > 0
        }
    }

    func redeemInvitation(
        codeHash: Data, userID: UUID, now: Date, decide: @Sendable (RedemptionContext) throws -> RedemptionDecision
    ) async throws -> UUID {
        try await pool.write { db in
            let stored = try Row.fetchOne(
                db, sql: "SELECT \(Self.invitationColumns) FROM ferry_space_invitations WHERE code_hash = ?", arguments: [codeHash]
            ).flatMap(Self.invitation)
            let email = try String.fetchOne(db, sql: "SELECT email FROM ferry_users WHERE id = ?", arguments: [userID.databaseText]) ?? ""
            let role = try stored.flatMap { stored in
                try String.fetchOne(
                    db, sql: "SELECT role FROM ferry_members WHERE space_id = ? AND user_id = ?",
                    arguments: [stored.invitation.spaceId.databaseText, userID.databaseText]
                )
            }.flatMap(SpaceRole.init(rawValue:))
            let context = RedemptionContext(
                invitation: stored, email: email, currentRole: role, spaceCount: try Self.spaceCount(db, userID: userID)
            )
            let decision = try decide(context)
            guard let invitation = stored?.invitation else { throw SpaceStorageError.spaceNotFound }
            if case .join(let role) = decision {
                try db.execute(
                    sql: """
                        INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role
                        """,
                    arguments: [invitation.spaceId.databaseText, userID.databaseText, role.rawValue, Timestamp.format(now)]
                )
                try db.execute(
                    sql: "UPDATE ferry_space_invitations SET accepted_by = ?, accepted_at = ? WHERE id = ?",
                    arguments: [userID.databaseText, Timestamp.format(now), invitation.id.databaseText]
                )
            }
            return invitation.spaceId
        }
    }

    func changeMember(
        space: UUID, callerID: UUID, memberID: UUID, now: Date, decide: @Sendable (MembershipContext) throws -> MembershipChange
    ) async throws -> SpaceMember? {
        try await pool.write { db in
            func role(_ user: UUID) throws -> SpaceRole? {
                try String.fetchOne(
                    db, sql: "SELECT role FROM ferry_members WHERE space_id = ? AND user_id = ?", arguments: [space.databaseText, user.databaseText]
                ).flatMap(SpaceRole.init(rawValue:))
            }
            let owners = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM ferry_members WHERE space_id = ? AND role = 'owner'", arguments: [space.databaseText]
            ) ?? 0
            let isPersonal = try Bool.fetchOne(db, sql: "SELECT is_personal FROM ferry_spaces WHERE id = ?", arguments: [space.databaseText]) ?? false
            let context = MembershipContext(callerRole: try role(callerID), memberRole: try role(memberID), ownerCount: owners, isPersonal: isPersonal)
            switch try decide(context) {
            case .nothing:
                break
            case .setRole(let newRole):
                try db.execute(
                    sql: "UPDATE ferry_members SET role = ? WHERE space_id = ? AND user_id = ?",
                    arguments: [newRole.rawValue, space.databaseText, memberID.databaseText]
                )
                if !newRole.canManageMembers { try Self.revokeInvitations(db, space: space, sentBy: memberID, now: now) }
            case .remove:
                try db.execute(
                    sql: "DELETE FROM ferry_members WHERE space_id = ? AND user_id = ?", arguments: [space.databaseText, memberID.databaseText]
                )
                try Self.revokeInvitations(db, space: space, sentBy: memberID, now: now)
                try db.execute(
                    sql: "UPDATE ferry_spaces SET rotation_required = 1 WHERE id = ? AND is_encrypted = 1 AND key_version > 0",
                    arguments: [space.databaseText]
                )
                return nil
            }
            return try Self.members(db, space: space, only: memberID).first
        }
    }

    func members(space: UUID) async throws -> [SpaceMember] {
        try await pool.read { db in try Self.members(db, space: space, only: nil) }
    }

    private static func members(_ db: Database, space: UUID, only user: UUID?) throws -> [SpaceMember] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT u.email, u.id, m.role FROM ferry_members m JOIN ferry_users u ON u.id = m.user_id
                WHERE m.space_id = ? AND (? IS NULL OR m.user_id = ?) ORDER BY u.email
                """,
            arguments: [space.databaseText, user?.databaseText, user?.databaseText]
        ).compactMap { row -> SpaceMember? in
            guard let role = SpaceRole(rawValue: row["role"]) else { return nil }
            return SpaceMember(email: row["email"], userId: UUID(wireText: row["id"]), role: role)
        }
    }

    /// Revokes the pending invitations `sender` sent into `space`: they lose their authority with the role.
    private static func revokeInvitations(_ db: Database, space: UUID, sentBy sender: UUID, now: Date) throws {
        try db.execute(
            sql: """
                UPDATE ferry_space_invitations SET revoked_at = ?
                WHERE space_id = ? AND invited_by = ? AND accepted_at IS NULL AND revoked_at IS NULL
                """,
            arguments: [Timestamp.format(now), space.databaseText, sender.databaseText]
        )
    }

    private static func spaceCount(_ db: Database, userID: UUID) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_members WHERE user_id = ?", arguments: [userID.databaseText]) ?? 0
    }

    private static let invitationColumns =
        "id, space_id, email, role, invited_by, created_at, expires_at, accepted_by, accepted_at, revoked_at"

    private static func invitation(_ row: Row) -> StoredInvitation? {
        guard let id = UUID(wireText: row["id"]), let space = UUID(wireText: row["space_id"]),
              let role = SpaceRole(rawValue: row["role"]), let sender = UUID(wireText: row["invited_by"]),
              let created = Timestamp.parse(row["created_at"]), let expires = Timestamp.parse(row["expires_at"]) else { return nil }
        return StoredInvitation(
            invitation: SpaceInvitation(id: id, spaceId: space, email: row["email"], role: role, invitedBy: sender, createdAt: created, expiresAt: expires),
            acceptedAt: (row["accepted_at"] as String?).flatMap(Timestamp.parse),
            acceptedBy: (row["accepted_by"] as String?).flatMap(UUID.init(wireText:)),
            revokedAt: (row["revoked_at"] as String?).flatMap(Timestamp.parse)
        )
    }
}
