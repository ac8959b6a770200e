import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: SpaceStorage {
    func spaces(userID: UUID) async throws -> [SpaceSummary] {
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

    func createSpace(id: UUID, name: String, isEncrypted: Bool, ownerID: UUID, now: Date, maximumSpaces: Int) async throws {
        let logger = self.logger
        do {
            try await client.withTransaction(logger: logger) { connection in
                // The owner's row serialises their joins and creations, so two at once cannot both pass the cap.
                try await connection.query("SELECT id FROM ferry_users WHERE id = \(ownerID) FOR UPDATE", logger: logger)
                guard try await Self.spaceCount(connection, userID: ownerID, logger: logger) < maximumSpaces else {
                    throw SpaceStorageError.tooManySpaces
                }
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
            throw error.closureError ?? error
        }
    }

    func createInvitation(_ invitation: SpaceInvitation, codeHash: Data, maximumPending: Int, now: Date) async throws {
        let logger = self.logger
        do {
            try await client.withTransaction(logger: logger) { connection in
                // The sender's row serialises their invitations, so two at once cannot both pass the cap.
                try await connection.query("SELECT id FROM ferry_users WHERE id = \(invitation.invitedBy) FOR UPDATE", logger: logger)
                let pending = try await connection.query(
                    """
                    SELECT count(*) FROM ferry_space_invitations
                    WHERE invited_by = \(invitation.invitedBy) AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > \(now)
                    """,
                    logger: logger
                )
                guard try await pending.decode(Int64.self).first(where: { _ in true }) ?? 0 < maximumPending else {
                    throw SpaceStorageError.tooManyInvitations
                }
                try await connection.query(
                    """
                    INSERT INTO ferry_space_invitations (id, space_id, code_hash, email, role, invited_by, created_at, expires_at)
                    VALUES (\(invitation.id), \(invitation.spaceId), \(ByteBuffer(bytes: codeHash)), \(invitation.email),
                      \(invitation.role.rawValue), \(invitation.invitedBy), \(invitation.createdAt), \(invitation.expiresAt))
                    """,
                    logger: logger
                )
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    func invitations(space: UUID, now: Date) async throws -> [SpaceInvitation] {
        try await Self.invitations(try await client.query(
            """
            SELECT \(unescaped: Self.invitationColumns) FROM ferry_space_invitations
            WHERE space_id = \(space) AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > \(now) ORDER BY created_at, id
            """,
            logger: logger
        )).map(\.invitation)
    }

    func revokeInvitation(space: UUID, id: UUID, now: Date) async throws -> Bool {
        let rows = try await client.query(
            """
            UPDATE ferry_space_invitations SET revoked_at = \(now)
            WHERE id = \(id) AND space_id = \(space) AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id
            """,
            logger: logger
        )
        return try await rows.decode(UUID.self).first(where: { _ in true }) != nil
    }

    func redeemInvitation(
        codeHash: Data, userID: UUID, now: Date, decide: @Sendable (RedemptionContext) throws -> RedemptionDecision
    ) async throws -> UUID {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                // The account's row serialises its joins (the cap on spaces); the invitation's row, its redemptions.
                let users = try await connection.query("SELECT email FROM ferry_users WHERE id = \(userID) FOR UPDATE", logger: logger)
                let email = try await users.decode(String.self).first(where: { _ in true }) ?? ""
                let stored = try await Self.invitations(try await connection.query(
                    "SELECT \(unescaped: Self.invitationColumns) FROM ferry_space_invitations WHERE code_hash = \(ByteBuffer(bytes: codeHash)) FOR UPDATE",
                    logger: logger
                )).first
                var role: SpaceRole?
                if let space = stored?.invitation.spaceId {
                    // The space's row serialises this with membership changes (lock order: user, invitation, space).
                    try await connection.query("SELECT id FROM ferry_spaces WHERE id = \(space) FOR UPDATE", logger: logger)
                    let roles = try await connection.query(
                        "SELECT role FROM ferry_members WHERE space_id = \(space) AND user_id = \(userID)", logger: logger
                    )
                    role = try await roles.decode(String.self).first(where: { _ in true }).flatMap(SpaceRole.init(rawValue:))
                }
                let count = try await Self.spaceCount(connection, userID: userID, logger: logger)
                let decision = try decide(RedemptionContext(invitation: stored, email: email, currentRole: role, spaceCount: count))
                guard let invitation = stored?.invitation else { throw SpaceStorageError.spaceNotFound }
                if case .join(let role) = decision {
                    try await connection.query(
                        """
                        INSERT INTO ferry_members (space_id, user_id, role, created_at) VALUES (\(invitation.spaceId), \(userID), \(role.rawValue), \(now))
                        ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role
                        """,
                        logger: logger
                    )
                    try await connection.query(
                        "UPDATE ferry_space_invitations SET accepted_by = \(userID), accepted_at = \(now) WHERE id = \(invitation.id)",
                        logger: logger
                    )
                }
                return invitation.spaceId
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    func changeMember(
        space: UUID, callerID: UUID, memberID: UUID, now: Date, decide: @Sendable (MembershipContext) throws -> MembershipChange
    ) async throws -> SpaceMember? {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection -> SpaceMember? in
                // The space's row serialises its membership changes: two owners cannot both leave.
                let spaces = try await connection.query("SELECT is_personal FROM ferry_spaces WHERE id = \(space) FOR UPDATE", logger: logger)
                let isPersonal = try await spaces.decode(Bool.self).first(where: { _ in true }) ?? false
                var roles: [UUID: SpaceRole] = [:]
                var owners = 0
                for try await (user, role) in try await connection.query(
                    "SELECT user_id, role FROM ferry_members WHERE space_id = \(space)", logger: logger
                ).decode((UUID, String).self) {
                    if role == SpaceRole.owner.rawValue { owners += 1 }
                    if user == callerID || user == memberID { roles[user] = SpaceRole(rawValue: role) }
                }
                let context = MembershipContext(callerRole: roles[callerID], memberRole: roles[memberID], ownerCount: owners, isPersonal: isPersonal)
                switch try decide(context) {
                case .nothing:
                    break
                case .setRole(let role):
                    try await connection.query(
                        "UPDATE ferry_members SET role = \(role.rawValue) WHERE space_id = \(space) AND user_id = \(memberID)", logger: logger
                    )
                    if !role.canManageMembers {
                        try await Self.revokeInvitations(connection, space: space, sentBy: memberID, now: now, logger: logger)
                    }
                case .remove:
                    try await connection.query("DELETE FROM ferry_members WHERE space_id = \(space) AND user_id = \(memberID)", logger: logger)
                    try await Self.revokeInvitations(connection, space: space, sentBy: memberID, now: now, logger: logger)
                    try await connection.query(
                        "UPDATE ferry_spaces SET rotation_required = true WHERE id = \(space) AND is_encrypted AND key_version > 0", logger: logger
                    )
                    return nil
                }
                return try await Self.members(connection.query(Self.membersQuery(space: space, only: memberID), logger: logger)).first
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    func members(space: UUID) async throws -> [SpaceMember] {
        try await Self.members(client.query(Self.membersQuery(space: space, only: nil), logger: logger))
    }

    private static func membersQuery(space: UUID, only user: UUID?) -> PostgresQuery {
        """
        SELECT u.email, u.id, m.role FROM ferry_members m JOIN ferry_users u ON u.id = m.user_id
        WHERE m.space_id = \(space) AND (\(user)::uuid IS NULL OR m.user_id = \(user)) ORDER BY u.email
        """
    }

    private static func members(_ rows: PostgresRowSequence) async throws -> [SpaceMember] {
        var members: [SpaceMember] = []
        for try await (email, userID, role) in rows.decode((String, UUID, String).self) {
            guard let role = SpaceRole(rawValue: role) else { continue }
            members.append(SpaceMember(email: email, userId: userID, role: role))
        }
        return members
    }

    /// Revokes the pending invitations `sender` sent into `space`: they lose their authority with the role.
    private static func revokeInvitations(_ connection: PostgresConnection, space: UUID, sentBy sender: UUID, now: Date, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE ferry_space_invitations SET revoked_at = \(now)
            WHERE space_id = \(space) AND invited_by = \(sender) AND accepted_at IS NULL AND revoked_at IS NULL
            """,
            logger: logger
        )
    }

    /// How many spaces the account is in.
    private static func spaceCount(_ connection: PostgresConnection, userID: UUID, logger: Logger) async throws -> Int {
        let rows = try await connection.query("SELECT count(*) FROM ferry_members WHERE user_id = \(userID)", logger: logger)
        return Int(try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0)
    }

    private static let invitationColumns =
        "id, space_id, email, role, invited_by, created_at, expires_at, accepted_by, accepted_at, revoked_at"

    private static func invitations(_ rows: PostgresRowSequence) async throws -> [StoredInvitation] {
        var invitations: [StoredInvitation] = []
        for try await row in rows {
            let (id, space, email, role, sender, created, expires, acceptedBy, acceptedAt, revokedAt) = try row.decode(
                (UUID, UUID, String, String, UUID, Date, Date, UUID?, Date?, Date?).self
            )
            guard let role = SpaceRole(rawValue: role) else { continue }
            invitations.append(StoredInvitation(
                invitation: SpaceInvitation(id: id, spaceId: space, email: email, role: role, invitedBy: sender, createdAt: created, expiresAt: expires),
                acceptedAt: acceptedAt, acceptedBy: acceptedBy, revokedAt: revokedAt
            ))
        }
        return invitations
    }
}
