import FerryCore
import Foundation

extension AuthClient {
    /// The signed-in user as the server knows it now (`GET /auth/v1/user`); the saved session is updated with it.
    public func user() async throws -> AuthUser {
        let user = try await send(ServerRequest("GET", "auth/v1/user"), as: AuthUser.self, what: "user")
        try remember(user)
        return user
    }

    /// Changes the signed-in user's password and/or metadata (`PUT /auth/v1/user`) and returns the updated user.
    ///
    /// `data` is merged into the user's metadata by the server; pass `nil` to leave it alone.
    @discardableResult
    public func updateUser(password: String? = nil, data: [String: JSONValue]? = nil) async throws -> AuthUser {
        let request = try ServerRequest.json("PUT", "auth/v1/user", body: UpdateUserBody(password: password, data: data))
        let user = try await send(request, as: AuthUser.self, what: "user")
        try remember(user)
        return user
    }

    /// Puts `user` into the current session (if it is theirs) and saves it.
    private func remember(_ user: AuthUser) throws {
        guard var session = try loadedSession(), session.user.id == user.id else { return }
        session.user = user
        try adopt(session, replacing: false)
    }
}
