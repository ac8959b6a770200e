import FerryCore
import Foundation
import JWTKit
import Logging

/// Accounts and sessions, Supabase Auth's rules: sign-up, sign-in, refresh-token rotation, user, sign-out.
///
/// Engine-agnostic: storage carries out each decision in one transaction; the rules live here.
struct AuthService: Sendable {
    typealias Storage = AuthStorage & ProfileStorage & IdentityStorage & EmailCodeStorage

    let storage: any Storage
    let issuer: TokenIssuer
    let keys: ServerKeys
    let hasher: PasswordHasher
    let configuration: AuthConfiguration
    let profileCollection: CollectionDefinition
    let requiredProfileFields: [String]
    let limits: AuthLimits
    let now: @Sendable () -> Date
    /// Tells open streams when sessions end.
    var events: (any RealtimeFeed)?
    /// Whether sign-up leaves the address unconfirmed until the mailed code comes back (mail set up, and
    /// `--no-email-confirmation` not given); otherwise addresses are confirmed at sign-up.
    var requiresEmailConfirmation = false

    init(storage: any Storage, keys: ServerKeys, schema: Schema, configuration: AuthConfiguration, now: @escaping @Sendable () -> Date = Date.init) async {
        self.storage = storage
        self.keys = keys
        self.issuer = await TokenIssuer(secret: keys.secret, issuer: configuration.issuer)
        self.hasher = PasswordHasher(parameters: configuration.passwordHashing, queueLength: configuration.passwordHashQueueLength)
        self.configuration = configuration
        self.profileCollection = schema.collection(named: "profiles") ?? CollectionDefinition(name: "profiles", fields: [], isSystem: true)
        self.requiredProfileFields = schema.requiredProfileFields
        self.limits = AuthLimits(configuration)
        self.now = now
    }

    // MARK: Sign-up and sign-in

    /// What a sign-up made: a session, or (with ``requiresEmailConfirmation``) a user who must confirm the address first.
    enum SignUpOutcome {
        case session(AuthSession)
        case unconfirmed(UserRecord)
    }

    /// Signs up; attempts per client are limited before the body is read (``AttemptLimitMiddleware``).
    func signUp(email rawEmail: String, password: String, data: JSONValue?) async throws -> SignUpOutcome {
        let email = try Self.validEmail(rawEmail)
        try PasswordPolicy.require(password)
        try Self.validMetadata(data)
        let time = now()
        let user = UserRecord(
            id: UUID(), email: email, passwordHash: try await hasher.hash(password),
            userMetadata: (data ?? .object([:])).jsonText, createdAt: time, updatedAt: time, lastSignInAt: nil,
            emailConfirmedAt: requiresEmailConfirmation ? nil : time
        )
        try Task.checkCancellation()
        do {
            try await storage.createUser(user)
        } catch AuthStorageError.emailTaken {
            // An account waiting for its confirmation, on an address nobody proved: the latest sign-up's password replaces
            // the earlier one (a squatter's, maybe) and its sessions end; the fresh code goes to the mailbox, as GoTrue resends.
            guard requiresEmailConfirmation, let waiting = try await storage.user(email: email),
                  waiting.emailConfirmedAt == nil, !waiting.isEmailProven
            else { throw ServiceError(.unprocessable, .userAlreadyExists, "User already registered") }
            let replaced = try await storage.updateUser(id: waiting.id, passwordHash: user.passwordHash, metadataPatch: data?.objectValue, now: time)
            try await storage.deleteSessions(userID: waiting.id, keeping: nil)
            await events?.publish([.accountChanged(waiting.id)])
            return .unconfirmed(replaced ?? waiting)
        }
        return requiresEmailConfirmation ? .unconfirmed(user) : .session(try await startSession(for: user))
    }

    /// Signs in with a password. `clientKey` is the client's rate-limit key; `authorization` the request's
    /// `Authorization` header, which lets a device holding a session of the account past the per-account limit.
    func signIn(email rawEmail: String, password: String, clientKey: String, presentedBy holder: Caller? = nil) async throws -> AuthSession {
        let email = rawEmail.trimmingCharacters(in: .whitespaces).lowercased()
        // No account has a longer address; refusing it here keeps the limiters' keys small.
        guard email.utf8.count <= 254 else { throw ServiceError(.invalidRequest, .invalidCredentials, "Invalid login credentials") }
        let failureKey = "\(email)|\(clientKey)"
        if let wait = await limits.failuresPerEmailAndClient.wait(failureKey) { throw ServiceError.rateLimited(wait) }
        // The per-account limit stops clients that have already failed for this account: the owner, signing in
        // from a client that has not, or from a device holding a session, is never locked out by others' guesses.
        if let wait = await limits.failuresPerAccount.wait(email), await limits.failuresPerEmailAndClient.hasAttempts(failureKey),
           holder?.claims.email.lowercased() != email {
            throw ServiceError.rateLimited(wait)
        }
        let user = email.isEmpty || email.contains("\u{0}") ? nil : try await storage.user(email: email)
        // An unknown email runs the same scrypt work as a wrong password, so timing tells nothing.
        guard try await hasher.verify(password, against: user?.passwordHash), let user else {
            await limits.failuresPerEmailAndClient.record(failureKey)
            await limits.failuresPerAccount.record(email)
            throw ServiceError(.invalidRequest, .invalidCredentials, "Invalid login credentials")
        }
        // Told only to whoever knows the password, as GoTrue does.
        try Self.refuseIfBanned(user, now: now())
        guard user.emailConfirmedAt != nil else {
            throw ServiceError(.invalidRequest, .emailNotConfirmed, "Email not confirmed: enter the code mailed to \(user.email), or ask for a new one (POST /auth/v1/resend).")
        }
        if hasher.needsRehash(user.passwordHash) {
            // Best effort: a busy hash queue or a lost race leaves the old hash, which still verifies.
            if let fresh = try? await hasher.hash(password) {
                _ = try? await storage.replacePasswordHash(userID: user.id, from: user.passwordHash, to: fresh)
            }
        }
        try Task.checkCancellation()
        return try await startSession(for: user)
    }

    /// Starts a session of `user`: a refresh token stored (hashed) and an access token issued.
    func startSession(for user: UserRecord) async throws -> AuthSession {
        let time = now()
        let session = SessionRecord(id: UUID(), userID: user.id, createdAt: time, refreshedAt: time)
        let refreshToken = TokenIssuer.makeRefreshToken()
        try await storage.createSession(session, refreshTokenHash: TokenIssuer.storageHash(of: refreshToken))
        var signedIn = user
        signedIn.lastSignInAt = time
        return try await makeSession(user: signedIn, sessionID: session.id, refreshToken: refreshToken)
    }

    private func makeSession(user: UserRecord, sessionID: UUID, refreshToken: String) async throws -> AuthSession {
        let (token, expiresAt) = try await issuer.makeAccessToken(
            userID: user.id, email: user.email, sessionID: sessionID, now: now(), lifetime: configuration.accessTokenLifetime
        )
        return AuthSession(
            accessToken: token, expiresIn: Int(configuration.accessTokenLifetime.components.seconds),
            expiresAt: Int(expiresAt.timeIntervalSince1970), refreshToken: refreshToken, user: Self.wireUser(user)
        )
    }

    // MARK: Refresh

    /// Rotates a refresh token (see docs/auth.md for the rules).
    func refresh(token: String) async throws -> AuthSession {
        let time = now()
        let presentedHash = TokenIssuer.storageHash(of: token)
        let successor = issuer.successor(of: token)
        let successorHash = TokenIssuer.storageHash(of: successor)
        let reuseInterval = configuration.refreshTokenReuseInterval.timeInterval
        let configuration = self.configuration
        let outcome = try await storage.refresh(tokenHash: presentedHash, now: time) { context in
            Self.decide(context, successorHash: successorHash, now: time, reuseInterval: reuseInterval, configuration: configuration)
        }
        guard let (context, decision) = outcome else {
            throw ServiceError(.invalidRequest, .refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
        }
        let handedOut: String
        switch decision {
        case .revokeSession(let code):
            // The session is gone: its open streams (on every instance) recheck and close.
            await events?.publish([.accountChanged(context.session.userID)])
            throw ServiceError(.invalidRequest, code, code == .sessionExpired
                ? "Session expired: sign in again."
                : "Invalid Refresh Token: Already Used. The session was revoked; sign in again.")
        case .rotate:
            handedOut = successor
        case .reuseActiveToken:
            guard let active = context.activeToken, let found = descendant(of: token, hashing: active.tokenHash) else {
                throw ServiceError(.invalidRequest, .refreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used")
            }
            handedOut = found
        }
        guard let user = try await storage.user(id: context.session.userID) else {
            throw ServiceError(.forbidden, .userNotFound, "User from sub claim in JWT does not exist")
        }
        return try await makeSession(user: user, sessionID: context.session.id, refreshToken: handedOut)
    }

    /// The rotation rules, applied inside the storage's transaction.
    static func decide(
        _ context: RefreshContext, successorHash: String, now: Date, reuseInterval: TimeInterval, configuration: AuthConfiguration
    ) -> RefreshDecision {
        let session = context.session
        if let timebox = configuration.sessionTimebox, now.timeIntervalSince(session.createdAt) > timebox.timeInterval {
            return .revokeSession(.sessionExpired)
        }
        if let inactivity = configuration.sessionInactivityTimeout, now.timeIntervalSince(session.refreshedAt) > inactivity.timeInterval {
            return .revokeSession(.sessionExpired)
        }
        guard let revokedAt = context.token.revokedAt else { return .rotate(successorHash: successorHash) }
        // The parent of the active token: the client lost the answer to its last refresh.
        if context.activeToken?.parentHash == context.token.tokenHash { return .reuseActiveToken }
        // Several requests of one device refreshing at once.
        if now.timeIntervalSince(revokedAt) <= reuseInterval { return .reuseActiveToken }
        return .revokeSession(.refreshTokenAlreadyUsed)
    }

    /// The token `hash` stands for, found among the next few successors of `token`.
    private func descendant(of token: String, hashing hash: String) -> String? {
        var candidate = token
        for _ in 0..<10 {
            candidate = issuer.successor(of: candidate)
            if TokenIssuer.storageHash(of: candidate) == hash { return candidate }
        }
        return nil
    }

    // MARK: Signed-in requests

    /// The verified caller of a request with `Authorization: Bearer <access token>`.
    struct Caller {
        var claims: AccessTokenClaims
        var userID: UUID
        var sessionID: UUID
        /// The device the session is bound to, if it registered one.
        var deviceID: UUID?
        /// When the session began: the sign-in (or sign-up) that proved the password.
        var signedInAt: Date
    }

    func authenticate(authorization: String?) async throws -> Caller {
        try await authenticate(authorization: authorization) { sessionID in (try await storage.session(id: sessionID), ()) }.caller
    }

    /// The token of an `Authorization` header `Bearer <token>` (the scheme in any case, blanks around the token
    /// dropped); `nil` for any other header or an empty token. Every authenticated request reads it: no Foundation
    /// trimming, which bridged through `NSString`.
    static func bearerToken(_ header: String) -> String? {
        let scheme = header.utf8.prefix(7)
        // Letters in either case; the space only as itself (`| 0x20` would also turn NUL into a space).
        guard scheme.count == 7, scheme.elementsEqual("bearer ".utf8, by: { $1 == 0x20 ? $0 == 0x20 : $0 | 0x20 == $1 }) else {
            return nil
        }
        let token = header.unicodeScalars.dropFirst(7).drop(while: \.properties.isWhitespace)
        let end = token.lastIndex { !$0.properties.isWhitespace }
        return end.map { String(token[...$0]) }
    }

    /// The verified caller, with what `lookUp` read beside its session (one round trip for both): the token is
    /// verified first, then `lookUp` returns the session it names (`nil`: ended) and anything else.
    func authenticate<Extra: Sendable>(
        authorization: String?, lookUp: @Sendable (UUID) async throws -> (session: SessionRecord?, extra: Extra)
    ) async throws -> (caller: Caller, extra: Extra) {
        guard let token = authorization.flatMap(Self.bearerToken) else {
            throw ServiceError(.unauthenticated, .noAuthorization, "This endpoint requires a valid Bearer token")
        }
        guard let claims = try? await issuer.verifyAccessToken(token),
              let userID = UUID(wireText: claims.sub.value), let sessionID = UUID(wireText: claims.sessionID)
        else {
            for role in ["service_role", "anon"] where await issuer.verifyAPIKey(token, role: role) {
                throw ServiceError(
                    .unauthenticated, .badJWT,
                    "invalid JWT: this is the \(role) API key, which names no user; send a user's access token (from /auth/v1/token) here"
                )
            }
            throw ServiceError(.unauthenticated, .badJWT, "invalid JWT: unable to parse or verify signature, or the token is expired")
        }
        let (session, extra) = try await lookUp(sessionID)
        guard let session else {
            throw ServiceError(.forbidden, .sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        return (Caller(claims: claims, userID: userID, sessionID: sessionID, deviceID: session.deviceID, signedInAt: session.createdAt), extra)
    }

    /// The caller again, as of now: an open stream checks that its session still exists (signed out → 403
    /// `session_not_found`) whenever its account changes.
    func recheck(_ caller: Caller) async throws -> Caller {
        guard let session = try await storage.session(id: caller.sessionID) else {
            throw ServiceError(.forbidden, .sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        var caller = caller
        caller.deviceID = session.deviceID
        return caller
    }

    func user(_ caller: Caller) async throws -> AuthUser {
        guard let user = try await storage.user(id: caller.userID) else {
            throw ServiceError(.forbidden, .userNotFound, "User from sub claim in JWT does not exist")
        }
        return Self.wireUser(user)
    }

    func updateUser(_ caller: Caller, password: String?, currentPassword: String? = nil, data: JSONValue?) async throws -> AuthUser {
        var passwordHash: String?
        if let password {
            if let wait = await limits.passwordChangesPerAccount.attempt(caller.userID.uuidString) { throw ServiceError.rateLimited(wait) }
            try PasswordPolicy.require(password)
            try await checkReauthentication(caller, currentPassword: currentPassword, action: "Changing the password")
            passwordHash = try await hasher.hash(password)
        }
        try Self.validMetadata(data)
        guard let user = try await storage.updateUser(
            id: caller.userID, passwordHash: passwordHash, metadataPatch: data?.objectValue, now: now()
        ) else {
            throw ServiceError(.forbidden, .userNotFound, "User from sub claim in JWT does not exist")
        }
        if passwordHash != nil {
            // As GoTrue does: a new password signs out every other device.
            try await storage.deleteSessions(userID: caller.userID, keeping: caller.sessionID)
            await events?.publish([.accountChanged(caller.userID)])
        }
        return Self.wireUser(user)
    }

    /// A password change or an account deletion needs a sign-in within ``AuthConfiguration/reauthenticationWindow`` or
    /// the current password, so an access token stolen later cannot lock the owner out or erase the account.
    func checkReauthentication(_ caller: Caller, currentPassword: String?, action: String) async throws {
        let window = configuration.reauthenticationWindow
        let age = now().timeIntervalSince(caller.signedInAt)
        if currentPassword == nil, age <= window.timeInterval { return }
        guard let currentPassword else {
            throw ServiceError(.invalidRequest, .reauthenticationNeeded,
                "\(action) needs a sign-in within the last \(window.components.seconds / 60) minutes, or current_password; sign in again and retry."
            )
        }
        // Each guess costs a hash: a stolen token guessing the password is slowed as a password change is.
        if let wait = await limits.passwordChangesPerAccount.attempt("reauthentication|\(caller.userID.uuidString)") {
            throw ServiceError.rateLimited(wait)
        }
        let user = try await storage.user(id: caller.userID)
        guard try await hasher.verify(currentPassword, against: user?.passwordHash) else {
            throw ServiceError(.invalidRequest, .reauthenticationNeeded, "current_password is not the account's password.")
        }
    }

    enum SignOutScope: String {
        case global, local, others
    }

    func signOut(_ caller: Caller, scope: SignOutScope) async throws {
        switch scope {
        case .local: try await storage.deleteSession(id: caller.sessionID)
        case .global: try await storage.deleteSessions(userID: caller.userID, keeping: nil)
        case .others: try await storage.deleteSessions(userID: caller.userID, keeping: caller.sessionID)
        }
        await events?.publish([.accountChanged(caller.userID)])
    }

    // MARK: Profile

    func profile(_ caller: Caller) async throws -> ProfileState {
        try await profile(userID: caller.userID)
    }

    /// The profile of `userID` and what it misses (the caller's own, or an export's).
    func profile(userID: UUID) async throws -> ProfileState {
        let fields = try await storage.profile(userID: userID, collection: profileCollection)
        let missing = requiredProfileFields.filter { Self.isBlank(fields?[$0] ?? .null) }
        return ProfileState(fields: fields, missing: fields == nil ? requiredProfileFields : missing)
    }

    func updateProfile(_ caller: Caller, fields: [String: JSONValue]) async throws -> ProfileState {
        var normalized: [String: JSONValue] = [:]
        for (name, value) in fields {
            guard let field = profileCollection.field(named: name) else {
                let known = profileCollection.fields.map(\.name).joined(separator: ", ")
                throw ServiceError(.unprocessable, .validationFailed, "'\(name)' is not a profile field (the schema's profile has: \(known.isEmpty ? "no fields" : known)).")
            }
            do {
                normalized[name] = try FieldValue.normalized(value, for: field)
            } catch {
                throw ServiceError(.unprocessable, .validationFailed, error.description)
            }
        }
        let seq = try await storage.saveProfile(userID: caller.userID, collection: profileCollection, fields: normalized, now: now())
        // A commit in the personal space, as a push's: the account's other devices hear of it (and pulls count it).
        if seq > 0 { await events?.publish([.committed(space: caller.userID, seq: seq, origin: caller.deviceID)]) }
        return try await profile(caller)
    }

    // MARK: Helpers

    /// `400 user_banned` while an admin's ban lasts: every way of signing in asks this, told only to whoever proved who they are.
    static func refuseIfBanned(_ user: UserRecord, now: Date) throws {
        if let bannedUntil = user.bannedUntil, bannedUntil > now {
            throw ServiceError(.invalidRequest, .userBanned, "User is banned until \(Timestamp.format(bannedUntil)).")
        }
    }

    /// A required profile field counts as missing when null, an empty or blank string, or an empty list or object.
    static func isBlank(_ value: JSONValue) -> Bool {
        switch value {
        case .null: true
        case .string(let text): text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        case .array(let items): items.isEmpty
        case .object(let members): members.isEmpty
        case .bool, .number: false
        }
    }

    /// `data` must be a JSON object without NUL characters (PostgreSQL's jsonb cannot hold them).
    static func validMetadata(_ data: JSONValue?) throws {
        guard let data else { return }
        guard data.objectValue != nil else { throw ServiceError(.invalidRequest, .validationFailed, "data must be a JSON object.") }
        guard !data.containsNUL else { throw ServiceError(.invalidRequest, .validationFailed, "data cannot contain the NUL character (U+0000).") }
    }

    static func validEmail(_ raw: String) throws -> String {
        let email = raw.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        // `.invalid` names no mailbox (RFC 2606); Ferry's stand-in addresses end with it.
        guard email.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].hasSuffix(".invalid"),
              !email.contains(where: { $0.isWhitespace || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } })
        else {
            throw ServiceError(.invalidRequest, .emailAddressInvalid, "Unable to validate email address: invalid format")
        }
        return email
    }

    static func wireUser(_ user: UserRecord, now: Date = Date()) -> AuthUser {
        var wire = AuthUser(
            id: user.id, email: user.hasPlaceholderEmail ? "" : user.email, emailConfirmedAt: user.emailConfirmedAt.map(Timestamp.format),
            lastSignInAt: user.lastSignInAt.map(Timestamp.format),
            userMetadata: JSONValue(jsonText: user.userMetadata) ?? .object([:]),
            createdAt: Timestamp.format(user.createdAt), updatedAt: Timestamp.format(user.updatedAt)
        )
        wire.bannedUntil = user.bannedUntil.flatMap { $0 > now ? Timestamp.format($0) : nil }
        wire.appMetadata = .object([
            "provider": .string(user.providers.first ?? "email"), "providers": .array(user.providers.map(JSONValue.string)),
        ])
        if user.providers != ["email"], let email = wire.identities.first?.objectValue {
            wire.identities = user.providers.map { provider in
                var identity = email
                identity["provider"] = .string(provider)
                return .object(identity)
            }
        }
        return wire
    }
}

extension ServiceError {
    /// 429 `over_request_rate_limit` with `Retry-After`.
    static func rateLimited(_ wait: Duration) -> ServiceError {
        let seconds = max(1, Int(wait.components.seconds) + 1)
        return ServiceError(.rateLimited, .overRequestRateLimit, "Too many attempts; retry in \(seconds) seconds.",
            retryAfter: .seconds(seconds)
        )
    }

    /// Supabase's 422 `weak_password`, whose reasons the body also carries.
    static func weakPassword(_ reasons: [String]) -> ServiceError {
        ServiceError(.unprocessable, .weakPassword,
            "Password should be at least \(PasswordPolicy.minimumLength) characters and mix letters with digits or symbols (\(reasons.joined(separator: ", "))).",
            details: ["weak_password": .object(["reasons": .array(reasons.map(JSONValue.string))])]
        )
    }
}
