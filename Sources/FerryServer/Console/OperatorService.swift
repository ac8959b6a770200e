import Crypto
import FerryCore
import FerrySecurity
import Foundation
import Logging

/// Operators: the people who run the server, who sign in to the console and nowhere else. `ferry admin` manages them
/// (``OperatorAdministration``); the console signs them in with a cookie session of its own.
struct OperatorService: Sendable {
    let storage: any OperatorStorage
    let hasher: PasswordHasher
    let logger: Logger
    /// Derives each session's CSRF token, so the token needs no storage of its own.
    private let csrfKey: SymmetricKey
    /// A session ends this long after its last request…
    var idleLifetime: TimeInterval = 30 * 60
    /// …and at the latest this long after sign-in.
    var absoluteLifetime: TimeInterval = 8 * 60 * 60
    /// Sign-ins per client address (the right one included).
    let attemptsPerClient = RateLimiter(limit: 10, window: .seconds(60))
    /// Wrong passwords per e-mail and client address: others' guesses never lock the operator out…
    let failuresPerClient = RateLimiter(limit: 5, window: .seconds(15 * 60))
    /// …and per e-mail from every address together, against guessing from many addresses.
    let failuresPerEmail = RateLimiter(limit: 50, window: .seconds(15 * 60))
    var now: @Sendable () -> Date = Date.init

    init(storage: any OperatorStorage, hasher: PasswordHasher, secret: [UInt8], logger: Logger) {
        self.storage = storage
        self.hasher = hasher
        self.logger = logger
        csrfKey = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array("ferry console csrf".utf8), using: SymmetricKey(data: secret)))
    }

    /// A signed-in operator, as each console request sees them.
    struct Session: Sendable {
        var operatorRecord: OperatorRecord
        /// The cookie's token (never logged), from which the CSRF token derives.
        var token: String
        var csrfToken: String
        var expiresAt: Date
    }

    private var cutoffs: OperatorSessionCutoffs {
        let time = now()
        return OperatorSessionCutoffs(idle: time.addingTimeInterval(-idleLifetime), absolute: time.addingTimeInterval(-absoluteLifetime))
    }

    /// Signs an operator in: limited per client and per e-mail; a wrong e-mail and a wrong password get one answer,
    /// after the same hashing work.
    func signIn(email rawEmail: String, password: String, client: String) async throws -> Session {
        let email = rawEmail.trimmingCharacters(in: .whitespaces).lowercased()
        let clientEmail = "\(email) \(client)"
        var wait = await attemptsPerClient.attempt(client)
        if wait == nil { wait = await failuresPerClient.wait(clientEmail) }
        if wait == nil { wait = await failuresPerEmail.wait(email) }
        if let wait {
            throw ServiceError(
                .rateLimited, .overRequestRateLimit, "Too many sign-in attempts; try again in \(max(1, wait.components.seconds)) seconds.",
                retryAfter: wait
            )
        }
        let record = email.count <= 254 ? try await storage.operatorRecord(email: email) : nil
        guard try await hasher.verify(password, against: record?.passwordHash), let record else {
            await failuresPerClient.record(clientEmail)
            await failuresPerEmail.record(email)
            logger.notice("console sign-in refused", metadata: ["ferry.client": "\(client)"])
            throw ServiceError(.unauthenticated, .invalidCredentials, "Wrong e-mail or password.")
        }
        let token = SecureRandom.token()
        let time = now()
        try await storage.createOperatorSession(tokenHash: ContentHasher.sha256(token), operatorID: record.id, now: time, expiredBefore: cutoffs)
        await log(record.email, "sign_in", target: client)
        return Session(
            operatorRecord: record, token: token, csrfToken: csrfToken(for: token),
            expiresAt: min(time.addingTimeInterval(idleLifetime), time.addingTimeInterval(absoluteLifetime))
        )
    }

    /// The live session a cookie's token names, or `nil`.
    func session(token: String) async throws -> Session? {
        guard token.count <= 128 else { return nil }
        let time = now()
        guard let (record, createdAt) = try await storage.operatorSession(tokenHash: ContentHasher.sha256(token), now: time, cutoffs: cutoffs) else {
            return nil
        }
        return Session(
            operatorRecord: record, token: token, csrfToken: csrfToken(for: token),
            expiresAt: min(time.addingTimeInterval(idleLifetime), createdAt.addingTimeInterval(absoluteLifetime))
        )
    }

    func signOut(_ session: Session) async throws {
        try await storage.deleteOperatorSession(tokenHash: ContentHasher.sha256(session.token))
        await log(session.operatorRecord.email, "sign_out", target: "")
    }

    /// Whether `presented` is the session's CSRF token, compared in constant time.
    func checksCSRF(_ presented: String?, for session: Session) -> Bool {
        guard let presented else { return false }
        return ConstantTime.isEqual(presented, session.csrfToken)
    }

    private func csrfToken(for token: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Array(token.utf8), using: csrfKey)).base64URLEncodedString()
    }

    /// Writes an operator action to the operator log and the server's log; a failure to store it is logged, not thrown,
    /// since the action itself is done.
    func log(_ operatorEmail: String, _ action: String, target: String) async {
        logger.notice("operator action", metadata: ["ferry.operator": "\(operatorEmail)", "ferry.action": "\(action)", "ferry.target": "\(target)"])
        do {
            try await storage.logOperatorAction(OperatorAction(at: now(), operatorEmail: operatorEmail, action: action, target: target))
        } catch {
            logger.error("the operator log could not be written", metadata: ["ferry.error": "\(StorageAvailability.summary(error))"])
        }
    }
}
