import FerryCore
import Foundation

/// An account as the server stores it.
public struct UserRecord: Sendable, Hashable {
    /// The user id (also the id of their personal space and profile).
    public var id: UUID
    /// Lowercased.
    public var email: String
    /// The scrypt hash in `$scrypt$…` form.
    public var passwordHash: String
    /// JSON object text.
    public var userMetadata: String
    /// When the account was created.
    public var createdAt: Date
    /// When the password or metadata last changed.
    public var updatedAt: Date
    /// When the user last signed in, if ever.
    public var lastSignInAt: Date?
    /// Until when an admin banned the user; sign-in is refused before then.
    public var bannedUntil: Date? = nil
    /// When the user proved they receive mail at ``email`` (a mailed code, Apple's word, or sign-up without mail set up);
    /// `nil` until then, and password sign-in is refused.
    public var emailConfirmedAt: Date? = nil
    /// Whether the user proved they own ``email``: a mailed code came back, Apple vouched for it, or an admin confirmed it.
    /// An address confirmed only because sign-up needed no mail is not proven: its password may be a squatter's, so
    /// the first proof by someone else (a sign-in code, a recovery code, Sign in with Apple) replaces that password.
    public var isEmailProven = false
    /// How the user signs in: `email` (a password or mailed codes) and, once linked, `apple`.
    public var providers: [String] = ["email"]

    /// The stored form of ``providers``.
    var providersText: String { providers.joined(separator: ",") }

    /// ``providers`` from its stored form.
    static func providers(fromText text: String) -> [String] {
        text.split(separator: ",").map(String.init)
    }

    /// Whether ``email`` stands in for an address the user never gave (Sign in with Apple without the email scope):
    /// such an address is unique and ends in `.invalid`, a name no mail can reach (RFC 2606), which sign-up refuses.
    public var hasPlaceholderEmail: Bool { email.hasSuffix(".invalid") }

    /// A unique stand-in address for a user who signs in through `provider` without giving one.
    static func placeholderEmail(provider: String, userID: UUID) -> String {
        "\(provider)-\(userID.uuidString.lowercased())@users.invalid"
    }

    /// The metadata text after GoTrue's merge of `patch`: its top-level keys replace the stored ones whole, and a
    /// `null` removes its key. Done here rather than in SQL so both engines keep every value as it was sent
    /// (SQLite's JSON functions turn numbers into 15-digit reals, and so `1.7976931348623157e308` into `-Inf`).
    public func mergingMetadata(_ patch: [String: JSONValue]) -> String {
        var members = JSONValue(jsonText: userMetadata)?.objectValue ?? [:]
        for (key, value) in patch {
            if case .null = value { members[key] = nil } else { members[key] = value }
        }
        return JSONValue.object(members).jsonText
    }
}

/// A signed-in session: one device's sign-in, ended by sign-out, revocation or expiry.
public struct SessionRecord: Sendable, Hashable {
    /// The session id (the `session_id` claim).
    public var id: UUID
    /// Whose session it is.
    public var userID: UUID
    /// When the session began (for the time box).
    public var createdAt: Date
    /// The last refresh (or the sign-in), for the inactivity timeout.
    public var refreshedAt: Date
    /// The device the session is bound to (`PUT /sync/v1/devices/{id}`); `nil` until it registers one.
    public var deviceID: UUID? = nil
}

/// A refresh token's stored form: its hash, never the token.
public struct RefreshTokenRecord: Sendable, Hashable {
    /// SHA-256 of the token, hex.
    public var tokenHash: String
    /// The session the token renews.
    public var sessionID: UUID
    /// The hash of the token this one replaced.
    public var parentHash: String?
    /// When the token was issued.
    public var createdAt: Date
    /// When it was used (and replaced); `nil` while it is the session's active token.
    public var revokedAt: Date?
}

/// What a refresh found, read and locked inside the refresh transaction.
public struct RefreshContext: Sendable {
    /// The presented token's record.
    public var token: RefreshTokenRecord
    /// Its session.
    public var session: SessionRecord
    /// The session's active (newest unrevoked) token, if any.
    public var activeToken: RefreshTokenRecord?
}

/// What the auth service decided a refresh should do; the storage carries it out in the same transaction.
public enum RefreshDecision: Sendable {
    /// Revoke the presented token and store its successor as the active token.
    case rotate(successorHash: String)
    /// Change nothing; the caller hands out the existing active token again.
    case reuseActiveToken
    /// Delete the session and its tokens, then fail with `code`.
    case revokeSession(ErrorCode)
}

/// Accounts, sessions and refresh tokens.
public protocol AuthStorage: Sendable {
    /// Creates a user and their personal space, with `identity` linked when given, in one transaction; throws
    /// ``AuthStorageError/emailTaken`` when the email exists.
    func createUser(_ user: UserRecord, identity: IdentityRecord?) async throws
    /// The user with this (lowercased) email.
    func user(email: String) async throws -> UserRecord?
    /// The user with this id.
    func user(id: UUID) async throws -> UserRecord?
    /// Changes a user's password hash and/or merges `metadataPatch` into their metadata
    /// (``UserRecord/mergingMetadata(_:)``), in one transaction that holds the row, so concurrent updates do not
    /// overwrite each other; returns the updated user, or `nil` if none.
    func updateUser(id: UUID, passwordHash: String?, metadataPatch: [String: JSONValue]?, now: Date) async throws -> UserRecord?
    /// Deletes a user with their sessions and tokens.
    func deleteUser(id: UUID) async throws
    /// Replaces the user's password hash with `new` only while it is still `old`, touching nothing else: a rehash at
    /// another cost must never undo a password change that came in between. Whether it replaced it.
    func replacePasswordHash(userID: UUID, from old: String, to new: String) async throws -> Bool
    /// A page of users, oldest first, and how many there are in all.
    func users(offset: Int, limit: Int) async throws -> (users: [UserRecord], total: Int)
    /// Bans the user until `until` (`nil` lifts a ban), ending every session of theirs when the ban starts, in one
    /// transaction; returns the user, or `nil` if none.
    func ban(userID: UUID, until: Date?, now: Date) async throws -> UserRecord?
    /// Creates a session with its first refresh token and records the sign-in.
    func createSession(_ session: SessionRecord, refreshTokenHash: String) async throws
    /// The session with this id, if it still exists.
    func session(id: UUID) async throws -> SessionRecord?
    /// Looks up the token by hash and, in one transaction with the session locked, applies what `decide` returns.
    /// Returns `nil` when no such token exists.
    func refresh(
        tokenHash: String, now: Date, decide: @Sendable (RefreshContext) -> RefreshDecision
    ) async throws -> (context: RefreshContext, decision: RefreshDecision)?
    /// Deletes one session.
    func deleteSession(id: UUID) async throws
    /// Deletes every session of a user, except `keeping` when given.
    func deleteSessions(userID: UUID, keeping: UUID?) async throws
}

extension AuthStorage {
    /// Creates a user with no linked identity.
    public func createUser(_ user: UserRecord) async throws {
        try await createUser(user, identity: nil)
    }
}

/// Storage-level failures the auth service turns into API errors.
public enum AuthStorageError: Error, Sendable {
    /// Another account has this email.
    case emailTaken
}
