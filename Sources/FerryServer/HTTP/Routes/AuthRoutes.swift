import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/auth/v1`: Supabase Auth's endpoints for email and password accounts.
struct AuthRoutes {
    let service: AuthService

    /// Runs `work` within the request deadline (``RequestDeadline``); past it the request fails with 503, as when
    /// the database is down.
    private func withinDeadline<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withTimeout(RequestDeadline.duration, work)
    }

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

    func register(on router: Router<FerryRequestContext>) {
        let auth = router.group("auth/v1")
            .add(middleware: APIKeyMiddleware(anonKey: service.keys.anonKey))
            .add(middleware: AttemptLimitMiddleware(limiter: service.limits.attemptsPerClient, counts: Self.isPasswordAttempt))
        auth.post("signup") { request, _ in
            var request = request
            let body = try await request.decodeJSON(Credentials.self)
            return JSONResponse(try await withinDeadline {
                try await service.signUp(email: body.email, password: body.password, data: body.data)
            })
        }
        auth.post("token") { request, context in
            var request = request
            switch request.uri.queryParameters.get("grant_type") {
            case "password":
                let body = try await request.decodeJSON(Credentials.self)
                let (clientKey, authorization) = (context.rateLimitKey, request.headers[.authorization])
                return JSONResponse(try await withinDeadline {
                    try await service.signIn(email: body.email, password: body.password, clientKey: clientKey, authorization: authorization)
                })
            case "refresh_token":
                let body = try await request.decodeJSON(RefreshRequest.self)
                return JSONResponse(try await withinDeadline { try await service.refresh(token: body.refreshToken) })
            case let other:
                throw APIError(.badRequest, .unsupportedGrantType, "Unsupported grant_type '\(other ?? "")': use password or refresh_token.")
            }
        }
        auth.get("user") { request, _ in
            let authorization = request.headers[.authorization]
            let caller = try await withinDeadline { try await service.authenticate(authorization: authorization) }
            return JSONResponse(try await withinDeadline { try await service.user(caller) })
        }
        auth.put("user") { request, _ in
            var request = request
            let authorization = request.headers[.authorization]
            let caller = try await withinDeadline { try await service.authenticate(authorization: authorization) }
            let body = try await request.decodeJSON(UserUpdate.self)
            if body.email != nil {
                throw APIError(.unprocessableContent, .validationFailed, "Changing the email address is not supported yet.")
            }
            return JSONResponse(try await withinDeadline {
                try await service.updateUser(caller, password: body.password, currentPassword: body.currentPassword, data: body.data)
            })
        }
        auth.post("logout") { request, _ -> HTTPResponse.Status in
            let raw = request.uri.queryParameters.get("scope") ?? "global"
            guard let scope = AuthService.SignOutScope(rawValue: raw) else {
                throw APIError(.badRequest, .validationFailed, "scope must be global, local or others, not '\(raw)'.")
            }
            let authorization = request.headers[.authorization]
            let caller = try await withinDeadline { try await service.authenticate(authorization: authorization) }
            try await withinDeadline { try await service.signOut(caller, scope: scope) }
            return .noContent
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

/// A `200` JSON response of any `Encodable` value.
struct JSONResponse<Value: Encodable & Sendable>: ResponseGenerator {
    let value: Value
    var status: HTTPResponse.Status = .ok

    init(_ value: Value, status: HTTPResponse.Status = .ok) {
        self.value = value
        self.status = status
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONValueEncoder().encodeText(value)))
        )
    }
}
