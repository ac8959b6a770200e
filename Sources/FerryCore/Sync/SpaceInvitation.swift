import Foundation

/// The body of `POST /sync/v1/spaces/{space}/invitations`.
public struct InviteRequest: Sendable, Hashable, Codable {
    /// Whom the invitation is for: only an account with this address can redeem its code.
    public var email: String
    /// The role to grant (not `owner`).
    public var role: SpaceRole
    /// How long the code stays valid, in seconds (the server's default, 7 days, when absent).
    public var expiresIn: Int?

    /// Creates a request.
    public init(email: String, role: SpaceRole, expiresIn: Int? = nil) {
        self.email = email
        self.role = role
        self.expiresIn = expiresIn
    }
}

/// A pending invitation into a space. Its `code` is shown once, in the reply that creates it; the server keeps
/// only a hash of it.
public struct SpaceInvitation: Sendable, Hashable, Codable {
    /// The invitation's id, for listing and revoking it.
    public var id: UUID
    /// The space it grants.
    public var spaceId: UUID
    /// The address it is for.
    public var email: String
    /// The role it grants.
    public var role: SpaceRole
    /// The account that sent it.
    public var invitedBy: UUID
    /// When it was sent.
    public var createdAt: Date
    /// When its code stops working.
    public var expiresAt: Date
    /// The single-use code the invitee redeems with `POST /sync/v1/invitations/accept`; only in the reply that
    /// creates the invitation.
    public var code: String?

    /// Creates an invitation.
    public init(
        id: UUID, spaceId: UUID, email: String, role: SpaceRole, invitedBy: UUID, createdAt: Date, expiresAt: Date, code: String? = nil
    ) {
        self.id = id
        self.spaceId = spaceId
        self.email = email
        self.role = role
        self.invitedBy = invitedBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.code = code
    }

    enum CodingKeys: String, CodingKey { case id, spaceId, email, role, invitedBy, createdAt, expiresAt, code }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        spaceId = try container.decode(UUID.self, forKey: .spaceId)
        email = try container.decode(String.self, forKey: .email)
        role = try container.decode(SpaceRole.self, forKey: .role)
        invitedBy = try container.decode(UUID.self, forKey: .invitedBy)
        createdAt = try container.decodeTimestamp(forKey: .createdAt)
        expiresAt = try container.decodeTimestamp(forKey: .expiresAt)
        code = try container.decodeIfPresent(String.self, forKey: .code)
    }

    /// Ids in lowercase and times in ISO 8601, as everywhere in Ferry's protocol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.lowercasedText, forKey: .id)
        try container.encode(spaceId.lowercasedText, forKey: .spaceId)
        try container.encode(email, forKey: .email)
        try container.encode(role, forKey: .role)
        try container.encode(invitedBy.lowercasedText, forKey: .invitedBy)
        try container.encodeTimestamp(createdAt, forKey: .createdAt)
        try container.encodeTimestamp(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(code, forKey: .code)
    }
}

/// The body of `POST /sync/v1/invitations/accept`.
public struct AcceptInvitationRequest: Sendable, Hashable, Codable {
    /// The code the invitation's sender passed on.
    public var code: String

    /// Creates a request.
    public init(code: String) { self.code = code }
}

/// The body of `PATCH /sync/v1/spaces/{space}/members/{user}`.
public struct ChangeRoleRequest: Sendable, Hashable, Codable {
    /// The member's new role.
    public var role: SpaceRole

    /// Creates a request.
    public init(role: SpaceRole) { self.role = role }
}
