import FerryCore
import Foundation
import Logging

extension AuthClient {
    /// What a mailed code proves, as `verify(email:code:type:)` names it.
    public enum CodeType: String, Sendable, CaseIterable {
        /// The code mailed at sign-up, which confirms the address.
        case signup
        /// A sign-in code (``requestSignInCode(email:)``), or a sign-up code.
        case email
        /// The code of a password reset (``requestPasswordReset(email:)``); the session it starts may set a new password.
        case recovery
        /// The code mailed to a new address (``changeEmail(to:)``).
        case emailChange = "email_change"
    }

    /// Mails a sign-in code to `email` (`POST /auth/v1/otp`). The server answers the same whether or not an account
    /// has the address, and mails only an existing one; then call ``verify(email:code:type:)`` with `.email`.
    public func requestSignInCode(email: String) async throws {
        _ = try await send(try ServerRequest.json("POST", "auth/v1/otp", body: EmailBody(email: email), isAuthorized: false))
    }

    /// Mails a password-reset code to `email` (`POST /auth/v1/recover`), answering the same whether or not an account has
    /// it; ``verify(email:code:type:)`` with `.recovery` then signs in, and ``updateUser(password:data:)`` sets the password.
    public func requestPasswordReset(email: String) async throws {
        _ = try await send(try ServerRequest.json("POST", "auth/v1/recover", body: EmailBody(email: email), isAuthorized: false))
    }

    /// Mails a new sign-up confirmation code to an unconfirmed `email` (`POST /auth/v1/resend`); the earlier code stops working.
    public func resendConfirmation(email: String) async throws {
        _ = try await send(try ServerRequest.json("POST", "auth/v1/resend", body: ResendBody(type: "signup", email: email), isAuthorized: false))
    }

    /// Signs in with a mailed 6-digit code (`POST /auth/v1/verify`) and saves the session. A wrong, used or expired code
    /// is `otp_expired`.
    @discardableResult
    public func verify(email: String, code: String, type: CodeType) async throws -> AuthSession {
        let request = try ServerRequest.json("POST", "auth/v1/verify", body: VerifyBody(type: type.rawValue, email: email, token: code), isAuthorized: false)
        let session = try await send(request, as: AuthSession.self, what: "session")
        try adopt(session, replacing: true)
        logger.info("signed in with a mailed code", metadata: ["ferry.user.id": "\(session.user.id)", "ferry.auth.code_type": "\(type.rawValue)"])
        return session
    }

    /// Asks to move the signed-in account to `email` (`PUT /auth/v1/user`): the server mails a code there, and the address
    /// changes when ``verify(email:code:type:)`` gets it with `.emailChange`. The returned user's `newEmail` is pending.
    ///
    /// A session signed in more than five minutes ago needs `currentPassword` (else `reauthentication_needed`), as a
    /// password change does.
    @discardableResult
    public func changeEmail(to email: String, currentPassword: String? = nil) async throws -> AuthUser {
        let body = EmailChangeBody(email: email, currentPassword: currentPassword)
        return try await send(try ServerRequest.json("PUT", "auth/v1/user", body: body), as: AuthUser.self, what: "user")
    }

    /// Signs in with Apple (`POST /auth/v1/token?grant_type=id_token`) and saves the session.
    ///
    /// - Parameters:
    ///   - idToken: the identity token of Apple's authorization (`ASAuthorizationAppleIDCredential.identityToken`, as text).
    ///   - rawNonce: the nonce whose SHA-256 (hex) the app set on Apple's request; `nil` if it set none.
    ///   - fullName: the name Apple returned, which it does only on the first authorization: the server keeps it in the
    ///     user's metadata (`full_name`), so a reinstall does not lose it.
    @discardableResult
    public func signInWithApple(idToken: String, rawNonce: String?, fullName: String? = nil) async throws -> AuthSession {
        let body = IDTokenBody(provider: "apple", idToken: idToken, nonce: rawNonce, data: fullName.map { ["full_name": .string($0)] })
        let request = try ServerRequest.json("POST", "auth/v1/token", query: [URLQueryItem(name: "grant_type", value: "id_token")], body: body, isAuthorized: false)
        let session = try await send(request, as: AuthSession.self, what: "session")
        try adopt(session, replacing: true)
        logger.info("signed in with Apple", metadata: ["ferry.user.id": "\(session.user.id)"])
        return session
    }
}
