import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/auth/v1`: Supabase Auth's endpoints: passwords, mailed codes, Sign in with Apple, the user, sign-out.
struct AuthRoutes {
    let service: AuthService
    let accounts: AccountService
    let apple: AppleSignInService
    let emailCodes: EmailCodeService

    struct Credentials: Decodable {
        var email: String
        var password: String
        var data: JSONValue?
    }

    /// `POST /signup`: supabase clients' `signUp`, and their `signInAnonymously` (no email, no phone), which is refused as
    /// GoTrue refuses it with anonymous sign-ins off.
    struct SignUpRequest: Decodable {
        var email: String?
        var phone: String?
        var password: String?
        var data: JSONValue?

        func credentials() throws -> Credentials {
            guard let email else {
                if phone != nil { throw APIError(.unprocessableContent, .phoneProviderDisabled, "Phone signups are disabled") }
                throw APIError(.unprocessableContent, .anonymousProviderDisabled, "Anonymous sign-ins are disabled")
            }
            guard let password else { throw APIError(.badRequest, .badRequest, "The request body is not the expected JSON: missing password.") }
            return Credentials(email: email, password: password, data: data)
        }
    }

    struct RefreshRequest: Decodable {
        var refreshToken: String
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    }

    struct UserUpdate: Decodable {
        var password: String?
        var data: JSONValue?
        var email: String?
        /// Ferry's reauthentication for a password change on a session older than the window.
        var currentPassword: String?

        enum CodingKeys: String, CodingKey {
            case password, data, email
            case currentPassword = "current_password"
        }
    }

    /// `DELETE /user`'s optional body: the current password, for a session older than the reauthentication window.
    struct AccountDeletion: Decodable {
        var currentPassword: String?
        enum CodingKeys: String, CodingKey { case currentPassword = "current_password" }
    }

    /// `POST /token?grant_type=id_token`: what supabase clients' `signInWithIdToken` sends, plus the `data` Ferry keeps.
    struct IDTokenRequest: Decodable {
        var provider: String
        var idToken: String
        var nonce: String?
        var data: JSONValue?
        enum CodingKeys: String, CodingKey {
            case provider, nonce, data
            case idToken = "id_token"
        }
    }

    /// `anonymous`: sign-up, sign-in and the mail requests, behind the anon key and the attempt limit (a session
    /// presented with them only spares its own account's lockout); `authenticated`: the rest.
    func register(anonymous: DeadlineGroup<FerryRequestContext>, authenticated: DeadlineGroup<AuthenticatedContext>) {
        let (service, accounts, apple, emailCodes) = (self.service, self.accounts, self.apple, self.emailCodes)
        anonymous.post("signup") { request, context in
            var request = request
            let body = try await request.decodeJSON(SignUpRequest.self).credentials()
            if service.requiresEmailConfirmation {
                try await emailCodes.checkSignUpMailLimits(email: body.email, clientKey: context.rateLimitKey)
            }
            switch try await service.signUp(email: body.email, password: body.password, data: body.data) {
            case .session(let session):
                return JSONResponse(session)
            case .unconfirmed(let user):
                // GoTrue's answer while the address waits for its code: the user alone, no session.
                try await emailCodes.sendSignUpConfirmation(to: user, redirectTo: request.uri.queryParameters.get("redirect_to"))
                var wire = AuthService.wireUser(user)
                wire.confirmationSentAt = Timestamp.format(service.now())
                return JSONResponse(wire)
            }
        }
        anonymous.post("token") { request, context in
            var request = request
            switch request.uri.queryParameters.get("grant_type") {
            case "password":
                let body = try await request.decodeJSON(Credentials.self)
                return JSONResponse(try await service.signIn(
                    email: body.email, password: body.password, clientKey: context.rateLimitKey, presentedBy: context.caller?.account
                ))
            case "refresh_token":
                let body = try await request.decodeJSON(RefreshRequest.self)
                return JSONResponse(try await service.refresh(token: body.refreshToken))
            case "id_token":
                let body = try await request.decodeJSON(IDTokenRequest.self)
                return JSONResponse(try await apple.signIn(provider: body.provider, idToken: body.idToken, nonce: body.nonce, data: body.data))
            case let other:
                throw APIError(.badRequest, .unsupportedGrantType, "Unsupported grant_type '\(other?.prefix(40) ?? "")': use password, refresh_token or id_token.")
            }
        }
        MailRoutes(emailCodes: emailCodes).register(anonymous: anonymous)
        let settings = Settings(apple: apple.tokenVerifier != nil, mailerAutoconfirm: !service.requiresEmailConfirmation)
        anonymous.get("settings") { _, _ in JSONResponse(settings) }
        authenticated.get("user") { _, context in
            JSONResponse(try await service.user(context.caller.account))
        }
        authenticated.put("user") { request, context in
            var request = request
            let body = try await request.decodeJSON(UserUpdate.self)
            if let email = body.email {
                guard body.password == nil, body.data == nil else {
                    throw APIError(.unprocessableContent, .validationFailed, "Change the email address in a request of its own, without password or data.")
                }
                return JSONResponse(try await emailCodes.requestEmailChange(
                    context.caller.account, to: email, currentPassword: body.currentPassword, clientKey: "user|\(context.caller.account.userID)", redirectTo: request.uri.queryParameters.get("redirect_to")
                ))
            }
            return JSONResponse(try await service.updateUser(
                context.caller.account, password: body.password, currentPassword: body.currentPassword, data: body.data
            ))
        }
        authenticated.delete("user") { request, context in
            var request = request
            let body = try await request.decodeJSONIfPresent(AccountDeletion.self)
            try await accounts.deleteAccount(context.caller.account, currentPassword: body?.currentPassword)
            return HTTPResponse.Status.noContent
        }
        authenticated.post("logout") { request, context in
            let raw = request.uri.queryParameters.get("scope") ?? "global"
            guard let scope = AuthService.SignOutScope(rawValue: raw) else {
                throw APIError(.badRequest, .validationFailed, "scope must be global, local or others, not '\(raw)'.")
            }
            try await service.signOut(context.caller.account, scope: scope)
            return HTTPResponse.Status.noContent
        }
    }
}

extension AuthRoutes {
    /// Apple's notice: `{"payload": "<JWS>"}`.
    struct AppleNotice: Decodable {
        var payload: String
    }

    /// What callers without an API key reach: the mailed link opened in a browser, and Apple's notices (Apple sends no
    /// key; the notice's signature is its credential).
    func register(open: DeadlineGroup<FerryRequestContext>) {
        let apple = self.apple
        MailRoutes(emailCodes: emailCodes).register(open: open)
        open.post("apple/notifications") { request, _ in
            var request = request
            let body = try await request.decodeJSON(AppleNotice.self)
            try await apple.receive(noticePayload: body.payload)
            return HTTPResponse.Status.ok
        }
    }

    /// Sign-ups and password sign-ins: what a session presented with them spares from others' lockouts.
    @Sendable static func isPasswordAttempt(_ request: Request) -> Bool {
        isPost(request, to: "signup") || isPost(request, to: "token", grantType: "password")
    }

    /// What the per-client attempt limit counts: sign-ups and sign-ins, by password or by an Apple identity token.
    @Sendable static func isSignInAttempt(_ request: Request) -> Bool {
        isPasswordAttempt(request) || isPost(request, to: "token", grantType: "id_token")
    }

    /// Whether the request may name its caller without needing one: a password sign-in (which a session spares from
    /// others' lockouts) or `/resend` (an address-change code is resent to the caller's pending address).
    @Sendable static func mayPresentCaller(_ request: Request) -> Bool {
        isPasswordAttempt(request) || isPost(request, to: "resend")
    }

    /// Whether `request` is a POST to the route ending in `last` (with `grant_type` when given). The router skips empty
    /// segments (`/auth/v1/signup/` is the sign-up route), so segments are compared, not text.
    private static func isPost(_ request: Request, to last: String, grantType: String? = nil) -> Bool {
        request.method == .post && request.uri.path.split(separator: "/").last.map(String.init) == last
            && (grantType == nil || request.uri.queryParameters.get("grant_type") == grantType)
    }
}

extension AuthRoutes {
    /// `GET /settings`, GoTrue's: which sign-in methods this server offers. Email and password always; Apple's identity
    /// tokens when `--apple-client-id` is set; no other provider, phone or anonymous sign-in.
    struct Settings: Encodable, Sendable {
        var apple: Bool
        var mailerAutoconfirm: Bool

        enum CodingKeys: String, CodingKey {
            case external
            case disableSignup = "disable_signup"
            case mailerAutoconfirm = "mailer_autoconfirm"
            case phoneAutoconfirm = "phone_autoconfirm"
            case smsProvider = "sms_provider"
            case samlEnabled = "saml_enabled"
        }

        static let otherProviders = [
            "anonymous_users", "azure", "bitbucket", "discord", "facebook", "figma", "fly", "github", "gitlab", "google",
            "kakao", "keycloak", "linkedin", "linkedin_oidc", "notion", "phone", "slack", "slack_oidc", "spotify", "twitch",
            "twitter", "workos", "zoom",
        ]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var external = Dictionary(uniqueKeysWithValues: Self.otherProviders.map { ($0, JSONValue.bool(false)) })
            external["email"] = .bool(true)
            external["apple"] = .bool(apple)
            try container.encode(JSONValue.object(external), forKey: .external)
            try container.encode(false, forKey: .disableSignup)
            try container.encode(mailerAutoconfirm, forKey: .mailerAutoconfirm)
            try container.encode(false, forKey: .phoneAutoconfirm)
            try container.encode("", forKey: .smsProvider)
            try container.encode(false, forKey: .samlEnabled)
        }
    }
}
