import Foundation

/// A mailed one-time code and its link, as stored: hashes only, one per user and purpose.
public struct EmailCodeRecord: Sendable, Hashable {
    /// Whose code it is.
    public var userID: UUID
    /// What it proves: `signup`, `magiclink`, `recovery` or `email_change`.
    public var purpose: String
    /// The address it was mailed to (for `email_change`, the new address).
    public var email: String
    /// HMAC of the address and the 6-digit code, under the server's secret.
    public var codeHash: String
    /// SHA-256 of the link's token.
    public var linkHash: String
    /// When it was mailed (the per-address interval between mails counts from here).
    public var createdAt: Date
    /// When it stops working.
    public var expiresAt: Date
    /// Wrong codes tried against it.
    public var attempts: Int = 0

    /// Creates a code record.
    public init(userID: UUID, purpose: String, email: String, codeHash: String, linkHash: String, createdAt: Date, expiresAt: Date) {
        self.userID = userID
        self.purpose = purpose
        self.email = email
        self.codeHash = codeHash
        self.linkHash = linkHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// Mailed codes, and the address changes they confirm.
public protocol EmailCodeStorage: Sendable {
    /// Stores `code`, replacing the user's earlier code of the same purpose (only the newest one works).
    func saveCode(_ code: EmailCodeRecord) async throws
    /// The user's code of `purpose`, if any (for the interval between mails).
    func code(userID: UUID, purpose: String) async throws -> EmailCodeRecord?
    /// Counts a try against the address's codes of `purposes`, then deletes and returns the live one whose hash is
    /// `codeHash` if it has had at most `maximumAttempts` tries (this one included); a code works once, and tries sent at
    /// once cannot outrun the limit.
    func redeemCode(email: String, purposes: [String], codeHash: String, now: Date, maximumAttempts: Int) async throws -> EmailCodeRecord?
    /// Deletes and returns the live code with one of `purposes` whose link token hashes to `linkHash`, if any.
    func redeemLink(linkHash: String, purposes: [String], now: Date) async throws -> EmailCodeRecord?
    /// Marks the user's address confirmed (keeping an earlier confirmation) and proven, and returns the user. With
    /// `replacingPasswordHash`, in the same transaction the password hash is replaced and every session of the user ends:
    /// what proves an address someone else may have squatted on.
    func proveEmail(userID: UUID, now: Date, replacingPasswordHash: String?) async throws -> UserRecord?
    /// Changes the user's address to `email`, confirmed and proven, and drops the user's other codes (mailed to the old
    /// address); throws ``AuthStorageError/emailTaken`` when another user has it.
    func changeEmail(userID: UUID, to email: String, now: Date) async throws -> UserRecord?
}
