import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/auth/v1/admin/users`: GoTrue's admin API, behind ``ServiceRoleMiddleware``.
struct AdminRoutes {
    let admin: AdminService

    /// `POST /admin/users` and `PUT /admin/users/{id}`: the attributes supabase-py's `AdminUserAttributes` sends.
    struct UserAttributes: Decodable {
        var email: String?
        var password: String?
        var userMetadata: JSONValue?
        var emailConfirm: Bool?
        var banDuration: String?
        var phone: String?

        enum CodingKeys: String, CodingKey {
            case email, password, phone
            case userMetadata = "user_metadata"
            case emailConfirm = "email_confirm"
            case banDuration = "ban_duration"
        }
    }

    /// `GET /admin/users`: GoTrue's list, `{"users": [...], "aud": "authenticated"}`.
    struct UserList: Encodable {
        var users: [AuthUser]
        var aud = "authenticated"
    }

    func register(on group: DeadlineGroup<FerryRequestContext>) {
        let admin = self.admin
        group.get("users") { request, _ in
            let query = request.uri.queryParameters
            let page = try Self.number(query.get("page"), "page"), perPage = try Self.number(query.get("per_page"), "per_page")
            let listed = try await admin.users(page: page, perPage: perPage)
            var response = JSONResponse(UserList(users: listed.users))
            response.headers[.totalCount] = "\(listed.total)"
            let last = max(1, (listed.total + listed.perPage - 1) / listed.perPage)
            var links: [String] = []
            if listed.page < last { links.append("</admin/users?page=\(listed.page + 1)&per_page=\(listed.perPage)>; rel=\"next\"") }
            links.append("</admin/users?page=\(last)&per_page=\(listed.perPage)>; rel=\"last\"")
            response.headers[.link] = links.joined(separator: ", ")
            return response
        }
        group.post("users") { request, _ in
            var request = request
            let body = try await request.decodeJSON(UserAttributes.self)
            guard let email = body.email else {
                throw APIError(.badRequest, .validationFailed, "email is required: Ferry's users sign in with an address.")
            }
            try Self.refusePhone(body)
            return JSONResponse(try await admin.createUser(
                email: email, password: body.password, metadata: body.userMetadata, emailConfirm: body.emailConfirm, banDuration: body.banDuration
            ))
        }
        group.post("generate_link") { request, _ in
            var request = request
            var body = try await request.decodeJSON(AdminService.LinkRequest.self)
            body.redirectTo = body.redirectTo ?? request.uri.queryParameters.get("redirect_to")
            let (user, link, type) = try await admin.generateLink(body)
            // GoTrue's answer: the user's fields with the link's beside them.
            var members = JSONValue(jsonText: String(decoding: try JSONValueEncoder().encodeText(user), as: UTF8.self))?.objectValue ?? [:]
            members["action_link"] = .string(link.link)
            members["email_otp"] = .string(link.code)
            members["hashed_token"] = .string(link.token)
            members["redirect_to"] = .string(link.redirectTo)
            members["verification_type"] = .string(type)
            return JSONResponse(JSONValue.object(members))
        }
        group.get("users/:id") { _, context in
            JSONResponse(try await admin.user(try Self.id(context)))
        }
        group.put("users/:id") { request, context in
            var request = request
            let body = try await request.decodeJSON(UserAttributes.self)
            if body.email != nil {
                throw APIError(.unprocessableContent, .validationFailed, "Changing a user's email address is not supported yet.")
            }
            try Self.refusePhone(body)
            return JSONResponse(try await admin.updateUser(
                try Self.id(context), password: body.password, metadata: body.userMetadata, banDuration: body.banDuration
            ))
        }
        group.delete("users/:id") { _, context in
            try await admin.deleteUser(try Self.id(context))
            return JSONResponse(JSONValue.object([:]))
        }
    }

    private static func id(_ context: FerryRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(wireText:)) else {
            throw APIError(.notFound, .userNotFound, "User not found: the path names no user id (a UUID).")
        }
        return id
    }

    private static func number(_ text: String?, _ name: String) throws -> Int? {
        guard let text else { return nil }
        guard let number = Int(text) else { throw APIError(.badRequest, .validationFailed, "\(name) must be a whole number.") }
        return number
    }

    private static func refusePhone(_ body: UserAttributes) throws {
        if body.phone != nil { throw APIError(.unprocessableContent, .validationFailed, "Ferry has no phone sign-in: phone is not supported.") }
    }
}

extension HTTPField.Name {
    static let totalCount = Self("X-Total-Count")!
    static let link = Self("Link")!
}
