import Foundation

/// A sign-in identity an outside provider vouches for (Sign in with Apple's subject), linked to one user.
public struct IdentityRecord: Sendable, Hashable {
    /// The provider's name: `apple`.
    public var provider: String
    /// The provider's stable id of the person (Apple's `sub`).
    public var subject: String
    /// The user the identity signs in as.
    public var userID: UUID
    /// The address the provider last gave, if any (an Apple private relay address included).
    public var email: String?
    /// What the provider said of the person, as a JSON object (`email_verified`, `is_private_email`, `email_disabled`).
    public var data: String
    /// When the identity was linked.
    public var createdAt: Date
    /// When the provider last said something of it.
    public var updatedAt: Date

    /// Creates an identity record.
    public init(provider: String, subject: String, userID: UUID, email: String?, data: String, createdAt: Date, updatedAt: Date) {
        self.provider = provider
        self.subject = subject
        self.userID = userID
        self.email = email
        self.data = data
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Identities from outside providers, and what their notices change.
public protocol IdentityStorage: Sendable {
    /// The identity of `provider` with `subject`, and its user.
    func identity(provider: String, subject: String) async throws -> (identity: IdentityRecord, user: UserRecord)?
    /// Links `identity` to its (existing) user, adding the provider to the user's providers, in one transaction.
    func link(_ identity: IdentityRecord) async throws
    /// Replaces what the provider said of an identity (its address and data); returns it, or `nil` if none.
    func updateIdentity(provider: String, subject: String, email: String?, data: String, now: Date) async throws -> IdentityRecord?
    /// Ends every session of `userID` that began before `date`: a provider's revocation ends the sessions it covers,
    /// not the ones a later sign-in started (a notice delivered twice, or late, ends nothing new).
    func deleteSessions(userID: UUID, startedBefore date: Date) async throws
}
