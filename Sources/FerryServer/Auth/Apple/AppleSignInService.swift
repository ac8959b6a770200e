import FerryCore
import FerrySecurity
import Foundation

/// Sign in with Apple: an Apple identity token becomes a session, and Apple's notices end sessions or update the
/// identity (see docs/auth.md, "Sign in with Apple").
///
/// The Apple subject is the identity. The first sign-in creates the user (with Apple's address when the token has one),
/// or links an existing account when Apple says the address is verified; later sign-ins find the user by subject even
/// when the token has no address.
struct AppleSignInService: Sendable {
    static let provider = "apple"

    let auth: AuthService
    let tokenVerifier: AppleTokenVerifier?

    init(auth: AuthService, configuration: AppleSignInConfiguration) {
        self.auth = auth
        self.tokenVerifier = configuration.isConfigured
            ? AppleTokenVerifier(keys: AppleKeySet(configuration: configuration), clientIDs: Set(configuration.clientIDs), now: auth.now)
            : nil
    }

    /// Signs in with an identity token; `data` (the name the app got from Apple's first authorization, which Apple
    /// sends only once) is merged into the user's metadata.
    func signIn(provider: String, idToken: String, nonce: String?, data: JSONValue?) async throws -> AuthSession {
        guard provider == Self.provider else {
            throw ServiceError(.invalidRequest, .providerDisabled, "Only the apple provider signs in with an id_token here, not '\(provider.prefix(40))'.")
        }
        let identity = try await requireVerifier().identity(idToken: idToken, nonce: nonce)
        try AuthService.validMetadata(data)
        let user = try await user(for: identity, data: data)
        try AuthService.refuseIfBanned(user, now: auth.now())
        return try await auth.startSession(for: user)
    }

    /// Applies a verified notice: `consent-revoked` and `account-delete` end every session of the user that began before
    /// the event (sessions do not record how they signed in, so a linked account's password sessions end too); `email-disabled` and `email-enabled` record whether Apple forwards mail to the relay address. A notice
    /// for an identity Ferry does not know changes nothing.
    func receive(noticePayload: String) async throws {
        let notice = try await requireVerifier().notice(payload: noticePayload)
        guard let (identity, user) = try await auth.storage.identity(provider: Self.provider, subject: notice.subject) else { return }
        switch notice.type {
        // Apple's documentation has named the deletion both `account-delete` and `account-deleted`.
        case "consent-revoked", "account-delete", "account-deleted":
            try await auth.storage.deleteSessions(userID: user.id, startedBefore: notice.eventTime)
            await auth.events?.publish([.accountChanged(user.id)])
        case "email-disabled", "email-enabled":
            var data = JSONValue(jsonText: identity.data)?.objectValue ?? [:]
            data["email_disabled"] = JSONValue.bool(notice.type == "email-disabled")
            _ = try await auth.storage.updateIdentity(
                provider: Self.provider, subject: notice.subject, email: notice.email ?? identity.email, data: JSONValue.object(data).jsonText,
                now: auth.now()
            )
        default:
            break
        }
    }

    private func requireVerifier() throws -> AppleTokenVerifier {
        guard let verifier = tokenVerifier else {
            throw ServiceError(.invalidRequest, .providerDisabled,
                "Sign in with Apple is not set up on this server (ferry serve --apple-client-id <bundle id>)."
            )
        }
        return verifier
    }

    /// The user `identity` signs in as: found by subject, linked by a verified address, or created.
    private func user(for identity: AppleIdentity, data: JSONValue?) async throws -> UserRecord {
        let time = auth.now()
        if let (known, user) = try await auth.storage.identity(provider: Self.provider, subject: identity.subject) {
            if identity.email != nil, identity.email != known.email {
                _ = try await auth.storage.updateIdentity(
                    provider: Self.provider, subject: identity.subject, email: identity.email, data: Self.data(identity), now: time
                )
            }
            // A link whose proof did not finish (the request failed between the two): finish it now.
            if !user.isEmailProven, identity.isEmailVerified, identity.email == user.email {
                return try await merged(data, into: try await prove(user))
            }
            return try await merged(data, into: user)
        }
        let record = IdentityRecord(
            provider: Self.provider, subject: identity.subject, userID: UUID(), email: identity.email, data: Self.data(identity),
            createdAt: time, updatedAt: time
        )
        if let email = identity.email, let existing = try await auth.storage.user(email: email) {
            // Linking hands the account to whoever holds this Apple ID: only when Apple vouches for the address.
            guard identity.isEmailVerified else {
                throw ServiceError(.unprocessable, .emailExists,
                    "An account with \(email) exists and Apple has not verified the address; sign in with the password instead."
                )
            }
            var linked = record
            linked.userID = existing.id
            do {
                try await auth.storage.link(linked)
            } catch {
                // The same first sign-in twice at once: the other request linked it.
                guard let (_, user) = try await auth.storage.identity(provider: Self.provider, subject: identity.subject) else { throw error }
                return user
            }
            return try await merged(data, into: try await prove(existing))
        }
        var metadata: [String: JSONValue] = ["sub": .string(identity.subject), "iss": .string(AppleTokenVerifier.issuer), "provider_id": .string(identity.subject)]
        if let email = identity.email {
            metadata["email"] = .string(email)
            metadata["email_verified"] = .bool(identity.isEmailVerified)
        }
        for (key, value) in data?.objectValue ?? [:] { metadata[key] = value }
        let user = UserRecord(
            id: record.userID, email: identity.email ?? UserRecord.placeholderEmail(provider: Self.provider, userID: record.userID),
            // No password signs in: a random one, never told to anyone.
            passwordHash: try await auth.hasher.hash(SecureRandom.token()), userMetadata: JSONValue.object(metadata).jsonText,
            createdAt: time, updatedAt: time, lastSignInAt: nil,
            emailConfirmedAt: identity.isEmailVerified || identity.email == nil ? time : nil,
            isEmailProven: identity.isEmailVerified && identity.email != nil, providers: [Self.provider]
        )
        do {
            try await auth.storage.createUser(user, identity: record)
            return user
        } catch AuthStorageError.emailTaken {
            // Two first sign-ins at once: the other one created the user (or an account took the address meanwhile).
            if let (_, user) = try await auth.storage.identity(provider: Self.provider, subject: identity.subject) { return user }
            throw ServiceError(.unprocessable, .emailExists, "An account with this address was just created; sign in again.")
        } catch {
            if let (_, user) = try await auth.storage.identity(provider: Self.provider, subject: identity.subject) { return user }
            throw error
        }
    }

    /// Apple's word proves the address. If nothing had proven it before, the account's password may be a squatter's (an
    /// address taken at a sign-up that needed no mail): it goes, with every session (their streams close too).
    private func prove(_ user: UserRecord) async throws -> UserRecord {
        let replacement = user.isEmailProven ? nil : try await auth.hasher.hash(SecureRandom.token())
        let proven = try await auth.storage.proveEmail(userID: user.id, now: auth.now(), replacingPasswordHash: replacement)
        if replacement != nil { await auth.events?.publish([.accountChanged(user.id)]) }
        return proven ?? user
    }

    private func merged(_ data: JSONValue?, into user: UserRecord) async throws -> UserRecord {
        guard let patch = data?.objectValue, !patch.isEmpty else { return user }
        return try await auth.storage.updateUser(id: user.id, passwordHash: nil, metadataPatch: patch, now: auth.now()) ?? user
    }

    private static func data(_ identity: AppleIdentity) -> String {
        JSONValue.object([
            "sub": .string(identity.subject), "email_verified": .bool(identity.isEmailVerified),
            "is_private_email": .bool(identity.isPrivateEmail),
        ]).jsonText
    }
}
