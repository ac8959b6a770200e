import Crypto
import FerryCore
import FerrySecurity
import Foundation
import Logging

/// Mailed one-time codes and links, GoTrue's way: sign-up confirmation, passwordless sign-in (`/otp`), recovery
/// (`/recover`), address change, `/resend`, `/verify`, and the admin's generated links.
///
/// Codes are 6 digits, single-use, expire after ``MailConfiguration/codeLifetime``, are stored as an HMAC under the
/// server's secret, and stop working after ``MailConfiguration/maximumCodeAttempts`` wrong tries. A request for an
/// unknown address answers exactly as one for a known address and sends nothing.
struct EmailCodeService: Sendable {
    /// What a code proves, and which mail carries it.
    enum Purpose: String, Sendable, CaseIterable {
        case signup, magiclink, recovery
        case emailChange = "email_change"

        static let all = allCases

        var template: MailTemplates.Kind {
            switch self {
            case .signup: .signup
            case .magiclink: .magiclink
            case .recovery: .recovery
            case .emailChange: .emailChange
            }
        }
    }

    let auth: AuthService
    let mailer: Mailer?
    let configuration: MailConfiguration
    let templates: MailTemplates
    /// The server's URL as mail links name it (`--public-url`, or the listening address).
    let publicURL: String
    let logger: Logger
    private let secret: SymmetricKey
    private let sendsPerAddress: RateLimiter
    private let sendsPerClient: RateLimiter
    /// Codes and links tried per client, right or wrong, counted before each try (so a burst cannot outrun it).
    private let attemptsPerClient: RateLimiter

    init(auth: AuthService, mailer: Mailer?, configuration: MailConfiguration, templates: MailTemplates, publicURL: String, logger: Logger) {
        self.auth = auth
        self.logger = logger
        self.mailer = mailer
        self.configuration = configuration
        self.templates = templates
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        // A key of its own, derived from the signing secret: a code's hash is no token signature.
        self.secret = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: auth.keys.secret), info: Data("ferry email codes".utf8), outputByteCount: 32
        )
        sendsPerAddress = RateLimiter(limit: 1, window: configuration.sendInterval)
        sendsPerClient = RateLimiter(limit: configuration.mailsPerClient, window: .seconds(3600))
        attemptsPerClient = RateLimiter(limit: auth.configuration.signInAttemptsPerAddress, window: auth.configuration.rateLimitWindow)
    }

    // MARK: Requests that mail

    /// Counts a sign-up's confirmation mail against the mail limits before the sign-up happens, so signing up again and
    /// again cannot flood a mailbox (one mail per address per `--mail-interval`, as `/resend` allows).
    func checkSignUpMailLimits(email rawEmail: String, clientKey: String) async throws {
        try await checkSendLimits(.signup, email: try AuthService.validEmail(rawEmail), clientKey: clientKey)
    }

    /// Mails the confirmation code of a user who just signed up (the limits were counted by ``checkSignUpMailLimits``).
    func sendSignUpConfirmation(to user: UserRecord, redirectTo: String?) async throws {
        let mailer = try requireMailer()
        try await mail(.signup, user: user, to: user.email, redirectTo: redirectTo, through: mailer)
    }

    /// `POST /otp` (`.magiclink`) and `POST /recover` (`.recovery`): a code for a known address that is not banned;
    /// nothing for an unknown one (the same answer either way).
    func requestCode(_ purpose: Purpose, email rawEmail: String, clientKey: String, redirectTo: String?) async throws {
        try await mailIfKnown(purpose, rawEmail: rawEmail, clientKey: clientKey, redirectTo: redirectTo) { !isBanned($0) }
    }

    /// Checks the address and the limits, then answers; the account is looked up and its mail made after the answer, so
    /// neither the answer nor its timing tells whether the address has an account (`when` says whether it gets mail).
    private func mailIfKnown(
        _ purpose: Purpose, rawEmail: String, clientKey: String, redirectTo: String?, when shouldMail: @escaping @Sendable (UserRecord) -> Bool
    ) async throws {
        let mailer = try requireMailer()
        let email = try AuthService.validEmail(rawEmail)
        try await checkSendLimits(purpose, email: email, clientKey: clientKey)
        Task { [self] in
            do {
                guard let user = try await auth.storage.user(email: email), shouldMail(user) else { return }
                try await mail(purpose, user: user, to: email, redirectTo: redirectTo, through: mailer)
            } catch {
                logger.error("a mailed code could not be made", metadata: ["ferry.mail.purpose": "\(purpose.rawValue)", "ferry.error": "\(type(of: error))"])
            }
        }
    }

    /// `POST /resend`: a new sign-up confirmation for an unconfirmed address, or a new address-change code for the
    /// caller's pending change; nothing otherwise (the same answer either way).
    func resend(type: String, email rawEmail: String?, caller: AuthService.Caller?, clientKey: String, redirectTo: String?) async throws {
        let mailer = try requireMailer()
        switch type {
        case "signup":
            try await mailIfKnown(.signup, rawEmail: rawEmail ?? "", clientKey: clientKey, redirectTo: redirectTo) { $0.emailConfirmedAt == nil }
        case "email_change":
            guard let caller else {
                throw ServiceError(.unauthenticated, .noAuthorization, "Resending an address-change code needs the user's access token.")
            }
            guard let pending = try await auth.storage.code(userID: caller.userID, purpose: Purpose.emailChange.rawValue),
                  let user = try await auth.storage.user(id: caller.userID)
            else { return }
            try await checkSendLimits(.emailChange, email: pending.email, clientKey: clientKey)
            try await mail(.emailChange, user: user, to: pending.email, redirectTo: redirectTo, through: mailer)
        default:
            throw ServiceError(.invalidRequest, .validationFailed, "type must be signup or email_change, not '\(type.prefix(40))'.")
        }
    }

    /// `PUT /user` with `email`: mails a code to the new address; the address changes when it comes back. Like a password
    /// change it needs a recent sign-in or the current password: a stolen access token alone cannot move the account to
    /// an address the thief reads (and then reset its password).
    func requestEmailChange(
        _ caller: AuthService.Caller, to rawEmail: String, currentPassword: String?, clientKey: String, redirectTo: String?
    ) async throws -> AuthUser {
        let mailer = try requireMailer()
        let email = try AuthService.validEmail(rawEmail)
        guard let user = try await auth.storage.user(id: caller.userID) else {
            throw ServiceError(.forbidden, .userNotFound, "User from sub claim in JWT does not exist")
        }
        var wire = AuthService.wireUser(user, now: auth.now())
        guard email != user.email else { return wire }
        try await auth.checkReauthentication(caller, currentPassword: currentPassword, action: "Changing the email address")
        // Counted before the address is looked up, so asking whether addresses are taken is limited like mailing them.
        try await checkSendLimits(.emailChange, email: email, clientKey: clientKey)
        if try await auth.storage.user(email: email) != nil {
            throw ServiceError(.unprocessable, .emailExists, "A user with this email address has already been registered")
        }
        try await mail(.emailChange, user: user, to: email, redirectTo: redirectTo, through: mailer)
        wire.newEmail = email
        wire.emailChangeSentAt = Timestamp.format(auth.now())
        return wire
    }

    // MARK: Verifying

    /// What a verified code or link did: the session it started, and where a link should land.
    struct Verified {
        /// The session the code started.
        var session: AuthSession
        /// What the code proved.
        var purpose: Purpose
        /// Where a link lands, when allowed.
        var redirectTo: String?
    }

    /// `POST /verify` with `email` and `token` (the 6-digit code).
    func verify(type: String, email rawEmail: String, code: String, clientKey: String) async throws -> Verified {
        let purposes = try Self.purposes(ofType: type)
        let email = rawEmail.trimmingCharacters(in: .whitespaces).lowercased()
        if let wait = await attemptsPerClient.attempt(clientKey) { throw ServiceError.rateLimited(wait) }
        let digits = code.trimmingCharacters(in: .whitespaces)
        guard email.utf8.count <= 254, digits.utf8.count == 6, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let record = try await auth.storage.redeemCode(
                  email: email, purposes: purposes.map(\.rawValue), codeHash: codeHash(email: email, code: digits), now: auth.now(),
                  maximumAttempts: configuration.maximumCodeAttempts
              )
        else { throw Self.invalidCode }
        return try await complete(record, redirectTo: nil)
    }

    /// `POST /verify` with `token_hash`, or the mailed link (`GET /verify?token=…`).
    func verify(type: String?, linkToken: String, redirectTo: String?, clientKey: String) async throws -> Verified {
        let purposes = try type.map(Self.purposes(ofType:))
        if let wait = await attemptsPerClient.attempt(clientKey) { throw ServiceError.rateLimited(wait) }
        guard linkToken.utf8.count <= 128,
              let record = try await auth.storage.redeemLink(
                  linkHash: Self.linkHash(linkToken), purposes: (purposes ?? Purpose.all).map(\.rawValue), now: auth.now()
              )
        else { throw Self.invalidCode }
        return try await complete(record, redirectTo: redirectTo)
    }

    /// Applies a redeemed code: the address is confirmed (or changed), and a session starts.
    private func complete(_ record: EmailCodeRecord, redirectTo: String?) async throws -> Verified {
        guard let purpose = Purpose(rawValue: record.purpose) else { throw Self.invalidCode }
        let time = auth.now()
        let user: UserRecord?
        switch purpose {
        case .emailChange:
            do {
                user = try await auth.storage.changeEmail(userID: record.userID, to: record.email, now: time)
            } catch AuthStorageError.emailTaken {
                throw ServiceError(.unprocessable, .emailExists, "Another account took \(record.email) meanwhile; choose another address.")
            }
        case .signup, .magiclink, .recovery:
            // A code mailed to an address the account has since left proves nothing about it.
            guard let current = try await auth.storage.user(id: record.userID), current.email == record.email else { throw Self.invalidCode }
            // A sign-up code proves the mailbox of whoever chose the password with it. A sign-in or recovery code proves
            // the mailbox only: on an address never proven, the password may be a squatter's, so it goes (with every session).
            let replacement = purpose != .signup && !current.isEmailProven ? try await auth.hasher.hash(SecureRandom.token()) : nil
            user = try await auth.storage.proveEmail(userID: record.userID, now: time, replacingPasswordHash: replacement)
            // The ended sessions' open streams close too, on every instance.
            if replacement != nil { await auth.events?.publish([.accountChanged(record.userID)]) }
        }
        guard let user else { throw Self.invalidCode }
        try AuthService.refuseIfBanned(user, now: time)
        return Verified(session: try await auth.startSession(for: user), purpose: purpose, redirectTo: allowedRedirect(redirectTo))
    }

    // MARK: The admin's links

    /// A link and code for `user` without mailing them (`POST /admin/generate_link`), for a backend that sends its own mail.
    func generateLink(_ purpose: Purpose, user: UserRecord, email: String, redirectTo: String?) async throws -> GeneratedLink {
        let (code, token) = try await issue(purpose, user: user, to: email)
        return GeneratedLink(
            code: code, token: token, link: link(token: token, purpose: purpose, redirectTo: redirectTo),
            redirectTo: allowedRedirect(redirectTo) ?? configuration.siteURL ?? publicURL
        )
    }

    /// What `generate_link` hands a backend instead of mailing it.
    struct GeneratedLink {
        /// The 6-digit code.
        var code: String
        /// The link's token (`token_hash` for `POST /verify`).
        var token: String
        /// The link a mail would hold.
        var link: String
        /// Where the link lands.
        var redirectTo: String
    }

    // MARK: Helpers

    /// The code purposes a `/verify` `type` accepts: `email` takes a sign-in or a sign-up code, as GoTrue's does.
    static func purposes(ofType type: String) throws -> [Purpose] {
        switch type {
        case "signup", "invite": [.signup]
        case "magiclink": [.magiclink]
        case "email": [.magiclink, .signup]
        case "recovery": [.recovery]
        case "email_change": [.emailChange]
        default:
            throw ServiceError(.invalidRequest, .validationFailed,
                "type must be signup, invite, magiclink, email, recovery or email_change, not '\(type.prefix(40))'."
            )
        }
    }

    static let invalidCode = ServiceError(.forbidden, .otpExpired, "Token has expired or is invalid: ask for a new code.")

    private func requireMailer() throws -> Mailer {
        guard let mailer else {
            throw ServiceError(.invalidRequest, .emailProviderDisabled,
                "This server sends no mail (start it with --smtp-url); mailed codes and links are not available."
            )
        }
        return mailer
    }

    private func checkSendLimits(_ purpose: Purpose, email: String, clientKey: String) async throws {
        if let wait = await sendsPerClient.attempt(clientKey) { throw ServiceError.rateLimited(wait) }
        if let wait = await sendsPerAddress.attempt("\(purpose.rawValue)|\(email)") {
            let seconds = max(1, Int(wait.components.seconds) + 1)
            throw ServiceError(.rateLimited, .overEmailSendRateLimit,
                "For security purposes, you can only request this after \(seconds) seconds.", retryAfter: .seconds(seconds)
            )
        }
    }

    private func isBanned(_ user: UserRecord) -> Bool {
        user.bannedUntil.map { $0 > auth.now() } ?? false
    }

    /// Stores a new code and link token for `user` (replacing any earlier one of that purpose) and queues the mail.
    private func mail(_ purpose: Purpose, user: UserRecord, to email: String, redirectTo: String?, through mailer: Mailer) async throws {
        let (code, token) = try await issue(purpose, user: user, to: email)
        let link = link(token: token, purpose: purpose, redirectTo: redirectTo)
        mailer.enqueue(templates.message(
            purpose.template, to: email, code: code, link: link, siteURL: configuration.siteURL ?? publicURL,
            tokenHash: token, redirectTo: allowedRedirect(redirectTo) ?? configuration.siteURL ?? publicURL
        ))
    }

    private func issue(_ purpose: Purpose, user: UserRecord, to email: String) async throws -> (code: String, token: String) {
        var generator = SystemRandomNumberGenerator()
        let code = String(Int.random(in: 0..<1_000_000, using: &generator) + 1_000_000).dropFirst().description
        let token = SecureRandom.token(byteCount: 24)
        let time = auth.now()
        try await auth.storage.saveCode(EmailCodeRecord(
            userID: user.id, purpose: purpose.rawValue, email: email, codeHash: codeHash(email: email, code: code),
            linkHash: Self.linkHash(token), createdAt: time, expiresAt: time.addingTimeInterval(configuration.codeLifetime.timeInterval)
        ))
        return (code, token)
    }

    private func link(token: String, purpose: Purpose, redirectTo: String?) -> String {
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "token", value: token), URLQueryItem(name: "type", value: purpose.rawValue)]
        if let redirect = allowedRedirect(redirectTo) { components.queryItems?.append(URLQueryItem(name: "redirect_to", value: redirect)) }
        return "\(publicURL)/auth/v1/verify?\(components.percentEncodedQuery ?? "")"
    }

    /// `redirectTo` when it is the site URL or starts with an allowed URL; `nil` otherwise (no open redirect).
    func allowedRedirect(_ redirectTo: String?) -> String? {
        guard let redirectTo, !redirectTo.isEmpty, redirectTo.utf8.count <= 2048 else { return nil }
        let allowed = configuration.redirectURLs + (configuration.siteURL.map { [$0] } ?? [])
        return allowed.contains { redirectTo == $0 || redirectTo.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") } ? redirectTo : nil
    }

    private func codeHash(email: String, code: String) -> String {
        ContentHasher.hex(HMAC<SHA256>.authenticationCode(for: Data("\(email)|\(code)".utf8), using: secret))
    }

    static func linkHash(_ token: String) -> String {
        ContentHasher.sha256(token)
    }
}
