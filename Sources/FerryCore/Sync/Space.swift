import Foundation

/// A member's rights in a space.
public enum SpaceRole: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Created the space; everything, including deleting it.
    case owner
    /// Reads, writes and manages members.
    case admin
    /// Reads and writes records.
    case member
    /// Reads only.
    case viewer

    /// Whether the role may push records.
    public var canWrite: Bool { self != .viewer }
    /// Whether the role may invite and remove members.
    public var canManageMembers: Bool { self == .owner || self == .admin }

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    /// `owner` < `admin` < `member` < `viewer`, in the order of decreasing rights.
    public static func < (lhs: SpaceRole, rhs: SpaceRole) -> Bool { lhs.rank < rhs.rank }
}

/// A space as its members see it.
public struct SpaceSummary: Sendable, Hashable, Codable {
    /// The space's id.
    public var id: UUID
    /// Its name (the owner's email for a personal space).
    public var name: String
    /// Whether this is the user's personal space.
    public var isPersonal: Bool
    /// Whether its records are end-to-end encrypted.
    public var isEncrypted: Bool
    /// The caller's role.
    public var role: SpaceRole
    /// The latest sequence number.
    public var seq: Int64
    /// An encrypted space's current key version (0 until its first key is stored); 0 for other spaces.
    public var keyVersion: Int

    /// Creates a summary.
    public init(id: UUID, name: String, isPersonal: Bool, isEncrypted: Bool, role: SpaceRole, seq: Int64, keyVersion: Int = 0) {
        self.id = id
        self.name = name
        self.isPersonal = isPersonal
        self.isEncrypted = isEncrypted
        self.role = role
        self.seq = seq
        self.keyVersion = keyVersion
    }

    enum CodingKeys: String, CodingKey { case id, name, isPersonal, isEncrypted, role, seq, keyVersion }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        isPersonal = try container.decode(Bool.self, forKey: .isPersonal)
        isEncrypted = try container.decode(Bool.self, forKey: .isEncrypted)
        role = try container.decode(SpaceRole.self, forKey: .role)
        seq = try container.decode(Int64.self, forKey: .seq)
        keyVersion = try container.decodeIfPresent(Int.self, forKey: .keyVersion) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.lowercasedText, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(isPersonal, forKey: .isPersonal)
        try container.encode(isEncrypted, forKey: .isEncrypted)
        try container.encode(role, forKey: .role)
        try container.encode(seq, forKey: .seq)
        try container.encode(keyVersion, forKey: .keyVersion)
    }
}

/// The body of `POST /sync/v1/spaces`.
public struct CreateSpaceRequest: Sendable, Hashable, Codable {
    /// The new space's id (chosen by the device, so it can be created offline); a random one when absent.
    public var id: UUID?
    /// The name.
    public var name: String
    /// Whether its records are end-to-end encrypted.
    public var encrypted: Bool?

    /// Creates a request.
    public init(id: UUID? = nil, name: String, encrypted: Bool? = nil) {
        self.id = id
        self.name = name
        self.encrypted = encrypted
    }
}

/// A member of a space.
public struct SpaceMember: Sendable, Hashable, Codable {
    /// The member's email.
    public var email: String
    /// The member's user id (optional only for servers before invitation codes, which listed pending invitations here).
    public var userId: UUID?
    /// The role.
    public var role: SpaceRole

    /// Creates a member entry.
    public init(email: String, userId: UUID?, role: SpaceRole) {
        self.email = email
        self.userId = userId
        self.role = role
    }
}
