import Foundation

/// An operator of the server: someone who signs in to the console, not an app user.
public struct OperatorRecord: Sendable, Hashable {
    public var id: UUID
    /// Lowercased.
    public var email: String
    /// The same salted hash as app users' passwords (``PasswordHasher``).
    public var passwordHash: String
    public var createdAt: Date
    public var updatedAt: Date
    public var lastSignInAt: Date?

    public init(id: UUID, email: String, passwordHash: String, createdAt: Date, updatedAt: Date, lastSignInAt: Date? = nil) {
        self.id = id
        self.email = email
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastSignInAt = lastSignInAt
    }
}

/// A console session as stored: the hash of its cookie's token, never the token.
struct OperatorSessionRecord: Sendable, Hashable {
    /// SHA-256 of the cookie's token, hex.
    var tokenHash: String
    var operatorID: UUID
    /// When the operator signed in (the session's absolute lifetime counts from here).
    var createdAt: Date
    /// The last request (its idle lifetime counts from here; renewed at most once a minute).
    var lastUsedAt: Date
}

/// One line of the operator log: who did what to what, and when.
public struct OperatorAction: Sendable, Hashable {
    public var at: Date
    /// The operator's e-mail (kept after the operator is removed).
    public var operatorEmail: String
    /// `sign_in`, `ban`, `delete_user`, `revoke_device`, `backup`…
    public var action: String
    /// What it acted on: a user's e-mail, a device id, a backup's name.
    public var target: String

    public init(at: Date, operatorEmail: String, action: String, target: String) {
        self.at = at
        self.operatorEmail = operatorEmail
        self.action = action
        self.target = target
    }
}

/// Operators, their console sessions and the operator log.
public protocol OperatorStorage: Sendable {
    /// Adds an operator; throws ``AuthStorageError/emailTaken`` when one has the address.
    func createOperator(_ record: OperatorRecord) async throws
    /// Every operator, by e-mail.
    func operators() async throws -> [OperatorRecord]
    func operatorRecord(email: String) async throws -> OperatorRecord?
    /// Removes the operator and their sessions; false when there was none.
    func removeOperator(email: String) async throws -> Bool
    /// Replaces the operator's password hash and ends their sessions; false when there is no such operator.
    func setOperatorPassword(email: String, passwordHash: String, now: Date) async throws -> Bool
    /// Stores a new session, notes the sign-in, and drops sessions that expired before `expiredBefore`.
    func createOperatorSession(tokenHash: String, operatorID: UUID, now: Date, expiredBefore: OperatorSessionCutoffs) async throws
    /// The live session with this hash and its operator, its last use moved to `now` when older than a minute.
    func operatorSession(tokenHash: String, now: Date, cutoffs: OperatorSessionCutoffs) async throws -> (OperatorRecord, Date)?
    func deleteOperatorSession(tokenHash: String) async throws
    func logOperatorAction(_ action: OperatorAction) async throws
    /// The log, newest first, and how many lines it holds.
    func operatorActions(offset: Int, limit: Int) async throws -> (actions: [OperatorAction], total: Int)
}

/// A session is live while it was used after `idle` and began after `absolute`.
public struct OperatorSessionCutoffs: Sendable, Hashable {
    public var idle: Date
    public var absolute: Date

    public init(idle: Date, absolute: Date) {
        self.idle = idle
        self.absolute = absolute
    }
}
