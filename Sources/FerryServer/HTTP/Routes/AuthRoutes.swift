import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/auth/v1`: Supabase Auth's endpoints for email and password accounts.
struct AuthRoutes {
    let service: AuthService
    let accounts: AccountService

    struct Credentials: Decodable {
        var email: String
        var password: String
        var data: JSONValue?
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

    /// `anonymous`: sign-up and sign-in, behind the anon key and the attempt limit (a session presented with them only
    /// spares its own account's lockout); `authenticated`: the rest.
    func register(anonymous: DeadlineGroup<FerryRequestContext>, authenticated: DeadlineGroup<AuthenticatedContext>) {
        let (service, accounts) = (self.service, self.accounts)
        anonymous.post("signup") { request, _ in
            var request = request
            let body = try await request.decodeJSON(Credentials.self)
            return JSONResponse(try await service.signUp(email: body.email, password: body.password, data: body.data))
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
            case let other:
                throw APIError(.badRequest, .unsupportedGrantType, "Unsupported grant_type '\(other ?? "")': use password or refresh_token.")
            }
        }
        authenticated.get("user") { _, context in
            JSONResponse(try await service.user(context.caller.account))
        }
        authenticated.put("user") { request, context in
            var request = request
            let body = try await request.decodeJSON(UserUpdate.self)
            if body.email != nil {
                throw APIError(.unprocessableContent, .validationFailed, "Changing the email address is not supported yet.")
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
    /// Sign-ups and password sign-ins: what the per-client attempt limit counts.
    @Sendable static func isPasswordAttempt(_ request: Request) -> Bool {
        guard request.method == .post else { return false }
        // The router skips empty segments (`/auth/v1/signup/` is the sign-up route), so compare segments, not text.
        let last = request.uri.path.split(separator: "/").last
        return last == "signup" || (last == "token" && request.uri.queryParameters.get("grant_type") == "password")
    }
}
