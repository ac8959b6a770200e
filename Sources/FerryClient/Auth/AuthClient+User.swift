import FerryCore
import Foundation
import Logging

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

    /// Deletes the signed-in account for good (`DELETE /auth/v1/user`), then forgets this device's session.
    ///
    /// The server erases the account's personal space (its records and files), the shared spaces it alone belongs to,
    /// its devices and every session, and frees its address; the account leaves the spaces it shares with others. A
    /// session signed in more than five minutes ago (the server's reauthentication window) needs `currentPassword`;
    /// without it the server answers `reauthentication_needed`. The last owner of a space others share is refused with
    /// `last_owner` until another member is an owner. The device's own store still holds what it synced: delete
    /// its file too (App Store guideline 5.1.1(v) asks that the account's data go).
    public func deleteAccount(currentPassword: String? = nil) async throws {
        let request = try currentPassword.map { try ServerRequest.json("DELETE", "auth/v1/user", body: DeleteAccountBody(currentPassword: $0)) }
            ?? ServerRequest("DELETE", "auth/v1/user")
        _ = try await send(request)
        try forgetSession()
        logger.info("account deleted")
    }

    /// Puts `user` into the current session (if it is theirs) and saves it.
    private func remember(_ user: AuthUser) throws {
        guard var session = try loadedSession(), session.user.id == user.id else { return }
        session.user = user
        try adopt(session, replacing: false)
    }
}
