import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/auth/v1`'s mailed codes and links: `/otp`, `/recover`, `/resend`, `/verify`, GoTrue's shapes.
struct MailRoutes {
    let emailCodes: EmailCodeService

    /// `POST /otp` and `POST /recover`: the address (GoTrue's other members are ignored).
    struct AddressRequest: Decodable {
        var email: String
        var redirectTo: String?
        enum CodingKeys: String, CodingKey {
            case email
            case redirectTo = "redirect_to"
        }
    }

    /// `POST /resend`: `signup` or `email_change`, and the address for `signup`.
    struct ResendRequest: Decodable {
        var type: String
        var email: String?
    }

    /// `POST /verify`: `email` and `token` (the code), or `token_hash` (the link's token).
    struct VerifyRequest: Decodable {
        var type: String
        var email: String?
        var token: String?
        var tokenHash: String?
        var redirectTo: String?
        enum CodingKeys: String, CodingKey {
            case type, email, token
            case tokenHash = "token_hash"
            case redirectTo = "redirect_to"
        }
    }

    /// The answer to a mail request, the same whether or not the address has an account.
    private static let accepted = JSONResponse(JSONValue.object([:]))

    func register(anonymous: DeadlineGroup<FerryRequestContext>) {
        let emailCodes = self.emailCodes
        // A sign-in code and a recovery code: the same request, answered the same way.
        let mailers: [(path: String, purpose: EmailCodeService.Purpose)] = [("otp", .magiclink), ("recover", .recovery)]
        for (path, purpose) in mailers {
            anonymous.post(RouterPath(path)) { request, context in
                var request = request
                let body = try await request.decodeJSON(AddressRequest.self)
                try await emailCodes.requestCode(
                    purpose, email: body.email, clientKey: context.rateLimitKey,
                    redirectTo: request.uri.queryParameters.get("redirect_to") ?? body.redirectTo
                )
                return Self.accepted
            }
        }
        anonymous.post("resend") { request, context in
            var request = request
            let body = try await request.decodeJSON(ResendRequest.self)
            try await emailCodes.resend(
                type: body.type, email: body.email, caller: context.caller?.account, clientKey: context.rateLimitKey,
                redirectTo: request.uri.queryParameters.get("redirect_to")
            )
            return Self.accepted
        }
        anonymous.post("verify") { request, context in
            var request = request
            let body = try await request.decodeJSON(VerifyRequest.self)
            let verified: EmailCodeService.Verified
            if let tokenHash = body.tokenHash {
                verified = try await emailCodes.verify(type: body.type, linkToken: tokenHash, redirectTo: body.redirectTo, clientKey: context.rateLimitKey)
            } else if let email = body.email, let token = body.token {
                verified = try await emailCodes.verify(type: body.type, email: email, code: token, clientKey: context.rateLimitKey)
            } else {
                throw APIError(.badRequest, .validationFailed, "Send email and token (the mailed code), or token_hash (the link's token).")
            }
            return JSONResponse(verified.session)
        }
    }

    /// The mailed link, opened in a browser (which sends no API key): verified, then redirected to the app with the
    /// session in the fragment (GoTrue's implicit flow), or a short page when no redirect is set up.
    func register(open: DeadlineGroup<FerryRequestContext>) {
        let emailCodes = self.emailCodes
        open.get("verify") { request, context -> Response in
            let query = request.uri.queryParameters
            let target = emailCodes.allowedRedirect(query.get("redirect_to")) ?? emailCodes.configuration.siteURL
            do {
                let verified = try await emailCodes.verify(
                    type: query.get("type"), linkToken: query.get("token") ?? "", redirectTo: target, clientKey: context.rateLimitKey
                )
                let session = verified.session
                guard let target else {
                    return Self.page(status: .ok, "Your address is confirmed. You can close this page and return to the app.")
                }
                var fragment = URLComponents()
                fragment.queryItems = [
                    .init(name: "access_token", value: session.accessToken), .init(name: "expires_at", value: "\(session.expiresAt)"),
                    .init(name: "expires_in", value: "\(session.expiresIn)"), .init(name: "refresh_token", value: session.refreshToken),
                    .init(name: "token_type", value: "bearer"), .init(name: "type", value: verified.purpose.rawValue),
                ]
                return Self.redirect(to: Self.replacingFragment(of: target, with: fragment.percentEncodedQuery ?? ""))
            } catch let error as ServiceError {
                guard let target else { return Self.page(status: .forbidden, error.message) }
                var fragment = URLComponents()
                fragment.queryItems = [
                    .init(name: "error", value: "access_denied"), .init(name: "error_code", value: error.code.rawValue),
                    .init(name: "error_description", value: error.message),
                ]
                return Self.redirect(to: Self.replacingFragment(of: target, with: fragment.percentEncodedQuery ?? ""))
            }
        }
    }

    /// `target` with its fragment (if any) replaced by `fragment`: the session travels in the fragment, once.
    private static func replacingFragment(of target: String, with fragment: String) -> String {
        String(target.prefix { $0 != "#" }) + "#" + fragment
    }

    private static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    private static func page(status: HTTPResponse.Status, _ text: String) -> Response {
        let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        let html = "<!doctype html><meta charset=utf-8><title>Ferry</title><p>\(escaped)</p>\n"
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }
}
