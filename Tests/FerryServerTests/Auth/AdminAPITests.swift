import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/auth/v1/admin/users` with the service-role key, on both engines (supabase-py's `auth.admin` drives it too, in
/// `SupabaseClientCompatibilityTests`).
@Suite("Accounts: the admin API")
struct AdminAPITests {
    static func admin(_ server: RouterServer, _ method: String, _ path: String, bearer: String? = nil, json: [String: Any]? = nil) async throws -> HTTPClient.Reply {
        let keys = server.server.keys
        var headers = ["apikey": keys.anonKey, "Authorization": "Bearer \(bearer ?? keys.serviceRoleKey)"]
        if json != nil { headers["Content-Type"] = "application/json" }
        return try await server.send(method, "/auth/v1/admin" + path, headers: headers, body: try json.map { try JSONSerialization.data(withJSONObject: $0) })
    }

    @Test("only the service-role key opens the admin API", arguments: TestEngine.available)
    func onlyTheServiceRole(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            for bearer in [user.session.accessToken, server.server.keys.anonKey, "nonsense"] {
                let refused = try await Self.admin(server, "GET", "/users", bearer: bearer)
                #expect(refused.status == 403 && refused.errorCode == "not_admin")
            }
            let noBearer = try await server.send("GET", "/auth/v1/admin/users", headers: ["apikey": server.server.keys.serviceRoleKey])
            #expect(noBearer.status == 401 && noBearer.errorCode == "no_authorization")
            let backendSignIn = try await user.auth.send(
                "POST", "/auth/v1/token?grant_type=password", json: ["email": user.session.user.email, "password": "correct horse 1"],
                apiKey: server.server.keys.serviceRoleKey
            )
            #expect(backendSignIn.status == 200, "a backend's client built with the service-role key signs users in too")
            let noKey = try await server.send("GET", "/auth/v1/admin/users", headers: ["Authorization": "Bearer \(server.server.keys.serviceRoleKey)"])
            #expect(noKey.status == 401 && noKey.errorCode == "invalid_api_key")
            let listed = try await Self.admin(server, "GET", "/users?per_page=1")
            #expect(listed.status == 200 && listed.header("X-Total-Count") == "1")
            #expect(try await Self.admin(server, "GET", "/users?per_page=0").status == 400)
            #expect(try await Self.admin(server, "GET", "/users?page=abc").status == 400)
            #expect(try await Self.admin(server, "GET", "/users/\(UUID().lowercasedText)").status == 404)
            #expect(try await Self.admin(server, "GET", "/users/not-a-uuid").status == 404)
            let badBan = try await Self.admin(server, "PUT", "/users/\(user.userID.lowercasedText)", json: ["ban_duration": "forever"])
            #expect(badBan.status == 400 && badBan.errorCode == "validation_failed")
            let taken = try await Self.admin(server, "POST", "/users", json: ["email": user.session.user.email, "password": "correct horse 9"])
            #expect(taken.status == 422 && taken.errorCode == "email_exists")
        }
    }

    @Test("a ban ends every session and refuses sign-in until lifted", arguments: TestEngine.available)
    func ban(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let user = try await SyncDevice.signUp(server)
            let banned = try await Self.admin(server, "PUT", "/users/\(user.userID.lowercasedText)", json: ["ban_duration": "1h30m"])
            #expect(banned.status == 200 && String(decoding: banned.body, as: UTF8.self).contains("banned_until"))
            #expect(try await user.auth.refresh(user.session.refreshToken).status == 400, "the session ended")
            let signIn = try await user.auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": user.session.user.email, "password": "correct horse 1"])
            #expect(signIn.status == 400 && signIn.errorCode == "user_banned")
            #expect(try await Self.admin(server, "PUT", "/users/\(user.userID.lowercasedText)", json: ["ban_duration": "none"]).status == 200)
            #expect(try await user.auth.signIn(user.session.user.email).user.id == user.userID)
        }
    }

    @Test("an admin's deletion erases the user and passes a space they last owned to its longest-standing member", arguments: TestEngine.available)
    func deletion(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server, database in
            let owner = try await SyncDevice.signUp(server, "owner")
            let member = try await SyncDevice.signUp(server, "member")
            let space = try await owner.createSpace("Church")
            try await owner.share(space.id, with: member, as: .viewer)
            let deleted = try await Self.admin(server, "DELETE", "/users/\(owner.userID.lowercasedText)")
            #expect(deleted.status == 200)
            #expect(try await Self.admin(server, "GET", "/users/\(owner.userID.lowercasedText)").status == 404)
            #expect(try await Self.admin(server, "DELETE", "/users/\(owner.userID.lowercasedText)").status == 404)
            let role = try await database.strings(
                "SELECT role FROM ferry_members WHERE space_id = '\(space.id.lowercasedText)' AND user_id = '\(member.userID.lowercasedText)'"
            )
            #expect(role == ["owner"], "the member now owns the space")
        }
    }
}
