import Foundation

/// A signed-in session as Supabase Auth (GoTrue) returns it from `/auth/v1/signup` and `/auth/v1/token`.
public struct AuthSession: Sendable, Hashable, Codable {
    /// The JWT to send as `Authorization: Bearer …`.
    public var accessToken: String
    /// Always `bearer`.
    public var tokenType: String
    /// Seconds the access token lives from issue.
    public var expiresIn: Int
    /// When the access token expires, in seconds since 1970.
    public var expiresAt: Int
    /// The opaque token that buys the next access token; it changes on every refresh.
    public var refreshToken: String
    /// The signed-in user.
    public var user: AuthUser

    /// Creates a session.
    public init(accessToken: String, tokenType: String = "bearer", expiresIn: Int, expiresAt: Int, refreshToken: String, user: AuthUser) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.user = user
    }

    /// When the access token expires.
    public var expiryDate: Date { Date(timeIntervalSince1970: TimeInterval(expiresAt)) }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case expiresAt = "expires_at"
        case refreshToken = "refresh_token"
        case user
    }
}

/// A user as Supabase Auth returns it (`GET /auth/v1/user`, and inside every session).
public struct AuthUser: Sendable, Hashable, Codable {
    /// The user id.
    public var id: UUID
    /// Always `authenticated`.
    public var aud: String
    /// Always `authenticated`.
    public var role: String
    /// The email address, lowercased.
    public var email: String
    /// Always empty: Ferry has no phone sign-in. Present because Supabase clients expect it.
    public var phone: String
    /// When the address was confirmed: at sign-up on a server without mail, when a mailed code or link came back, or
    /// when Apple vouched for it (Sign in with Apple); `nil` while unconfirmed.
    public var emailConfirmedAt: String?
    /// The same as ``emailConfirmedAt``, as GoTrue sends both.
    public var confirmedAt: String?
    /// When the user last signed in.
    public var lastSignInAt: String?
    /// Server-controlled metadata (`provider`, `providers`).
    public var appMetadata: JSONValue
    /// The `data` given at sign-up or by `PUT /auth/v1/user`.
    public var userMetadata: JSONValue
    /// The sign-in methods of the user: one `email` identity, in GoTrue's shape.
    public var identities: [JSONValue]
    /// When the account was created (ISO 8601).
    public var createdAt: String
    /// When the account last changed (ISO 8601).
    public var updatedAt: String
    /// Always `false`: Ferry has no anonymous sign-in.
    public var isAnonymous: Bool
    /// Until when the user is banned (an admin's `ban_duration`), if they are.
    public var bannedUntil: String?
    /// The address a pending change will move to, once its mailed code comes back.
    public var newEmail: String? = nil
    /// When the code for ``newEmail`` was mailed.
    public var emailChangeSentAt: String? = nil
    /// When the sign-up's confirmation code was mailed (in the reply to a sign-up that waits for it).
    public var confirmationSentAt: String? = nil

    /// Creates a user.
    public init(
        id: UUID, email: String, emailConfirmedAt: String?, lastSignInAt: String?, userMetadata: JSONValue,
        createdAt: String, updatedAt: String
    ) {
        self.id = id
        self.aud = "authenticated"
        self.role = "authenticated"
        self.email = email
        self.phone = ""
        self.emailConfirmedAt = emailConfirmedAt
        self.confirmedAt = emailConfirmedAt
        self.lastSignInAt = lastSignInAt
        self.appMetadata = .object(["provider": .string("email"), "providers": .array([.string("email")])])
        self.userMetadata = userMetadata
        let userID = JSONValue.string(id.lowercasedText)
        self.identities = [.object([
            "identity_id": userID, "id": userID, "user_id": userID, "provider": .string("email"), "email": .string(email),
            "identity_data": .object(["sub": userID, "email": .string(email), "email_verified": .bool(true)]),
            "last_sign_in_at": lastSignInAt.map(JSONValue.string) ?? .null,
            "created_at": .string(createdAt), "updated_at": .string(updatedAt),
        ])]
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.isAnonymous = false
    }

    enum CodingKeys: String, CodingKey {
        case id, aud, role, email, phone, identities
        case emailConfirmedAt = "email_confirmed_at"
        case confirmedAt = "confirmed_at"
        case lastSignInAt = "last_sign_in_at"
        case appMetadata = "app_metadata"
        case userMetadata = "user_metadata"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case isAnonymous = "is_anonymous"
        case bannedUntil = "banned_until"
        case newEmail = "new_email"
        case emailChangeSentAt = "email_change_sent_at"
        case confirmationSentAt = "confirmation_sent_at"
    }

    /// Encodes as GoTrue does, with the id in lowercase (the form of the JWT's `sub`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.lowercasedText, forKey: .id)
        try container.encode(aud, forKey: .aud)
        try container.encode(role, forKey: .role)
        try container.encode(email, forKey: .email)
        try container.encode(phone, forKey: .phone)
        try container.encode(emailConfirmedAt, forKey: .emailConfirmedAt)
        try container.encode(confirmedAt, forKey: .confirmedAt)
        try container.encode(lastSignInAt, forKey: .lastSignInAt)
        try container.encode(appMetadata, forKey: .appMetadata)
        try container.encode(userMetadata, forKey: .userMetadata)
        try container.encode(identities, forKey: .identities)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(isAnonymous, forKey: .isAnonymous)
        try container.encodeIfPresent(bannedUntil, forKey: .bannedUntil)
        try container.encodeIfPresent(newEmail, forKey: .newEmail)
        try container.encodeIfPresent(emailChangeSentAt, forKey: .emailChangeSentAt)
        try container.encodeIfPresent(confirmationSentAt, forKey: .confirmationSentAt)
    }
}
