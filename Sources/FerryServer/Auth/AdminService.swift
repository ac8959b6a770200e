import FerryCore
import FerrySecurity
import Foundation

/// GoTrue's admin API (`/auth/v1/admin/users`, supabase-py's `auth.admin`), for backends and operators holding the
/// service-role key: list, read, create, update (password, metadata, ban) and delete users.
struct AdminService: Sendable {
    let auth: AuthService
    let accounts: AccountService
    let emailCodes: EmailCodeService
    var now: @Sendable () -> Date = Date.init

    /// The most users one page lists.
    static let maximumPerPage = 1000

    /// A page of users, oldest first.
    struct UserPage: Sendable {
        var users: [AuthUser]
        var total: Int
        var page: Int
        var perPage: Int
    }

    func users(page: Int?, perPage: Int?) async throws -> UserPage {
        let page = page ?? 1, perPage = perPage ?? 50
        guard page >= 1, (1...Self.maximumPerPage).contains(perPage) else {
            throw ServiceError(.invalidRequest, .validationFailed, "page starts at 1 and per_page is 1 to \(Self.maximumPerPage).")
        }
        let (offset, overflow) = (page - 1).multipliedReportingOverflow(by: perPage)
        guard !overflow else { throw ServiceError(.invalidRequest, .validationFailed, "page is past every user.") }
        let (users, total) = try await auth.storage.users(offset: offset, limit: perPage)
        let time = now()
        return UserPage(users: users.map { AuthService.wireUser($0, now: time) }, total: total, page: page, perPage: perPage)
    }

    func user(_ id: UUID) async throws -> AuthUser {
        guard let user = try await auth.storage.user(id: id) else { throw Self.noUser(id) }
        return AuthService.wireUser(user, now: now())
    }

    /// Creates a user, confirmed when `emailConfirm` is true or the server confirms every sign-up (no mail set up).
    /// Without a password the account cannot sign in with one until an admin sets it.
    func createUser(email rawEmail: String, password: String?, metadata: JSONValue?, emailConfirm: Bool?, banDuration: String?) async throws -> AuthUser {
        let email = try AuthService.validEmail(rawEmail)
        try AuthService.validMetadata(metadata)
        let ban = try banDuration.map(Self.banEnd)
        let hash: String
        if let password {
            try PasswordPolicy.require(password)
            hash = try await auth.hasher.hash(password)
        } else {
            // No password matches: a random one, never told to anyone.
            hash = try await auth.hasher.hash(SecureRandom.token())
        }
        let time = now()
        var user = UserRecord(
            id: UUID(), email: email, passwordHash: hash, userMetadata: (metadata ?? .object([:])).jsonText,
            createdAt: time, updatedAt: time, lastSignInAt: nil,
            emailConfirmedAt: emailConfirm == true || !auth.requiresEmailConfirmation ? time : nil, isEmailProven: emailConfirm == true
        )
        do {
            try await auth.storage.createUser(user)
        } catch AuthStorageError.emailTaken {
            throw ServiceError(.unprocessable, .emailExists, "A user with this email address has already been registered")
        }
        if let ban {
            user = try await auth.storage.ban(userID: user.id, until: ban(time), now: time) ?? user
        }
        return AuthService.wireUser(user, now: time)
    }

    /// Sets a new password (the user's sessions stay, as GoTrue leaves them), merges `metadata` into the user's, and
    /// bans (`ban_duration` such as `24h`; every session ends) or lifts a ban (`none`).
    func updateUser(_ id: UUID, password: String?, metadata: JSONValue?, banDuration: String?) async throws -> AuthUser {
        try AuthService.validMetadata(metadata)
        let ban = try banDuration.map(Self.banEnd)
        var passwordHash: String?
        if let password {
            try PasswordPolicy.require(password)
            passwordHash = try await auth.hasher.hash(password)
        }
        let time = now()
        guard var user = try await auth.storage.updateUser(id: id, passwordHash: passwordHash, metadataPatch: metadata?.objectValue, now: time) else {
            throw Self.noUser(id)
        }
        if let ban {
            user = try await auth.storage.ban(userID: id, until: ban(time), now: time) ?? user
            await auth.events?.publish([.accountChanged(id)])
        }
        return AuthService.wireUser(user, now: time)
    }

    /// What `POST /admin/generate_link` asks for, as supabase-py's `generate_link` sends it (its `options` flattened).
    struct LinkRequest: Sendable, Decodable {
        var type: String
        var email: String
        var password: String?
        var data: JSONValue?
        var newEmail: String?
        var redirectTo: String?

        enum CodingKeys: String, CodingKey {
            case type, email, password, data
            case newEmail = "new_email"
            case redirectTo = "redirect_to"
        }
    }

    /// A code and link for a user without mailing them, for a backend that sends its own mail: `signup` (creating the
    /// user with `password`), `invite` (creating the user without one), `magiclink`, `recovery`, or `email_change_new`
    /// / `email_change_current` (to `new_email`). The link works like a mailed one.
    func generateLink(_ request: LinkRequest) async throws -> (user: AuthUser, link: EmailCodeService.GeneratedLink, verificationType: String) {
        let email = try AuthService.validEmail(request.email)
        let existing = try await auth.storage.user(email: email)
        let user: UserRecord
        let purpose: EmailCodeService.Purpose
        var recipient = email
        switch request.type {
        case "signup", "invite":
            if let existing {
                guard existing.emailConfirmedAt == nil else {
                    throw ServiceError(.unprocessable, .emailExists, "A user with this email address has already been registered")
                }
                user = existing
            } else {
                if request.type == "signup" && request.password == nil {
                    throw ServiceError(.invalidRequest, .validationFailed, "A signup link needs the new user's password.")
                }
                let created = try await createUser(
                    email: email, password: request.password, metadata: request.data, emailConfirm: false, banDuration: nil
                )
                guard let stored = try await auth.storage.user(id: created.id) else { throw Self.noUser(created.id) }
                user = stored
            }
            purpose = .signup
        case "magiclink", "recovery":
            guard let existing else { throw ServiceError(.notFound, .userNotFound, "User not found: no user has the address \(email).") }
            user = existing
            purpose = request.type == "magiclink" ? .magiclink : .recovery
        case "email_change_new", "email_change_current":
            guard let existing else { throw ServiceError(.notFound, .userNotFound, "User not found: no user has the address \(email).") }
            guard let newEmail = request.newEmail else {
                throw ServiceError(.invalidRequest, .validationFailed, "An email change link needs new_email.")
            }
            recipient = try AuthService.validEmail(newEmail)
            if try await auth.storage.user(email: recipient) != nil {
                throw ServiceError(.unprocessable, .emailExists, "A user with this email address has already been registered")
            }
            user = existing
            purpose = .emailChange
        default:
            throw ServiceError(.invalidRequest, .validationFailed,
                "type must be signup, invite, magiclink, recovery, email_change_new or email_change_current, not '\(request.type.prefix(40))'."
            )
        }
        let link = try await emailCodes.generateLink(purpose, user: user, email: recipient, redirectTo: request.redirectTo)
        return (AuthService.wireUser(user, now: now()), link, request.type)
    }

    func deleteUser(_ id: UUID) async throws {
        guard try await accounts.deleteUser(id) else { throw Self.noUser(id) }
    }

    static func noUser(_ id: UUID) -> ServiceError {
        ServiceError(.notFound, .userNotFound, "User not found: no user has id \(id.lowercasedText).")
    }

    /// When a ban given as a Go duration (`24h`, `1h30m`, `90s`) ends, from the moment it starts; `none` lifts a ban.
    static func banEnd(_ text: String) throws -> @Sendable (Date) -> Date? {
        if text == "none" { return { _ in nil } }
        guard let seconds = goDuration(text), seconds > 0 else {
            throw ServiceError(.invalidRequest, .validationFailed,
                "ban_duration is a duration such as 24h, 30m or 1h30m (units ns, us, ms, s, m, h), or none; not '\(text.prefix(40))'."
            )
        }
        return { $0.addingTimeInterval(seconds) }
    }

    /// Seconds of a Go duration: numbers each followed by a unit; `nil` when it is not one (or over 100 years).
    static func goDuration(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        var rest = Substring(text)
        var total = 0.0
        guard !rest.isEmpty, rest.count <= 64 else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            // Longer units first: `ms` before `m`.
            guard let (unit, scale) = units.first(where: { rest.hasPrefix($0.0) }) else { return nil }
            rest = rest.dropFirst(unit.count)
            total += value * scale
        }
        return total <= 100 * 365 * 86_400 ? total : nil
    }
}
