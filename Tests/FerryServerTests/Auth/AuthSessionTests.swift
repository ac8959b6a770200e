import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Refresh-token rotation, reuse, revocation, sign-out scopes and the profile, on both engines.
@Suite("Auth: sessions")
struct AuthSessionTests {
    static func noReuseWindow(_ configuration: inout ServerConfiguration) {
        AuthHarness.fastHashing(&configuration)
        configuration.auth.refreshTokenReuseInterval = .zero
    }

    @Test("every refresh rotates the token; an old token reused outside the interval revokes the session",
          arguments: TestEngine.available)
    func rotationAndRevocation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: Self.noReuseWindow) { server in
            let auth = AuthHarness(server: server)
            let first = try await auth.signUp(uniqueEmail())
            let second = try auth.decode(try await auth.refresh(first.refreshToken), as: AuthSession.self)
            #expect(second.refreshToken != first.refreshToken)
            #expect(second.user.id == first.user.id)
            let third = try auth.decode(try await auth.refresh(second.refreshToken), as: AuthSession.self)
            #expect(third.refreshToken != second.refreshToken)

            // `first` is neither the active token's parent nor inside the reuse interval: theft is assumed.
            let reused = try await auth.refresh(first.refreshToken)
            #expect(reused.status == 400)
            #expect(reused.errorCode == "refresh_token_already_used")
            let afterRevocation = try await auth.refresh(third.refreshToken)
            #expect(afterRevocation.errorCode == "refresh_token_not_found")
            let user = try await auth.send("GET", "/auth/v1/user", token: third.accessToken)
            #expect(user.status == 403)
            #expect(user.errorCode == "session_not_found")
            let unknown = try await auth.refresh("no-such-token")
            #expect(unknown.errorCode == "refresh_token_not_found")
        }
    }

    @Test("the parent of the active token is always accepted and gets the active token back", arguments: TestEngine.available)
    func lostResponse(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: Self.noReuseWindow) { server in
            let auth = AuthHarness(server: server)
            let first = try await auth.signUp(uniqueEmail())
            let second = try auth.decode(try await auth.refresh(first.refreshToken), as: AuthSession.self)
            // The client never saw `second` and tries `first` again.
            let retried = try auth.decode(try await auth.refresh(first.refreshToken), as: AuthSession.self)
            #expect(retried.refreshToken == second.refreshToken)
            let third = try auth.decode(try await auth.refresh(second.refreshToken), as: AuthSession.self)
            #expect(third.refreshToken != second.refreshToken)
        }
    }

    @Test("50 concurrent refreshes with one token all get the same single successor", arguments: TestEngine.available)
    func concurrentRefresh(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let first = try await auth.signUp(uniqueEmail())
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 {
                    group.addTask { try auth.decode(try await auth.refresh(first.refreshToken), as: AuthSession.self).refreshToken }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            let successor = try #require(tokens.first)
            #expect(successor != first.refreshToken)
            #expect(try await auth.refresh(successor).status == 200, "the successor is live")
        }
    }

    @Test("a session past its time box or inactivity timeout expires", arguments: TestEngine.available)
    func expiry(_ engine: TestEngine) async throws {
        for limit in [\AuthConfiguration.sessionTimebox, \AuthConfiguration.sessionInactivityTimeout] {
            try await RouterServer.with(engine, configure: { configuration in
                AuthHarness.fastHashing(&configuration)
                configuration.auth[keyPath: limit] = .zero  // any time at all is past the limit
            }) { server in
                let auth = AuthHarness(server: server)
                let session = try await auth.signUp(uniqueEmail())
                let reply = try await auth.refresh(session.refreshToken)
                #expect(reply.status == 400)
                #expect(reply.errorCode == "session_expired")
                #expect(try await auth.refresh(session.refreshToken).errorCode == "refresh_token_not_found", "the session ended")
            }
        }
    }

    @Test("sign-out scopes: others, local, global", arguments: TestEngine.available)
    func signOutScopes(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            let phone = try await auth.signUp(email)
            let mac = try await auth.signIn(email)
            let tablet = try await auth.signIn(email)
            func isLive(_ session: AuthSession) async throws -> Bool {
                try await auth.send("GET", "/auth/v1/user", token: session.accessToken).status == 200
            }
            #expect(try await auth.send("POST", "/auth/v1/logout?scope=others", token: phone.accessToken).status == 204)
            #expect(try await isLive(phone))
            #expect(try await !isLive(mac))
            #expect(try await !isLive(tablet))
            #expect(try await auth.send("POST", "/auth/v1/logout?scope=local", token: phone.accessToken).status == 204)
            #expect(try await !isLive(phone))
            #expect(try await auth.refresh(phone.refreshToken).errorCode == "refresh_token_not_found")

            let a = try await auth.signIn(email), b = try await auth.signIn(email)
            #expect(try await auth.send("POST", "/auth/v1/logout", token: a.accessToken).status == 204, "global by default")
            #expect(try await !isLive(a))
            #expect(try await !isLive(b))
        }
    }

    @Test("a deleted user's tokens stop working", arguments: TestEngine.available)
    func deletedUser(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail())
            try await server.server.storage.deleteUser(id: session.user.id)
            #expect(try await auth.refresh(session.refreshToken).errorCode == "refresh_token_not_found")
            #expect(try await auth.send("GET", "/auth/v1/user", token: session.accessToken).errorCode == "session_not_found")
        }
    }

    static let lingoSchema = """
        profile:
          fields:
            first_name: text
            native_language: text
            learning_languages: json
            birthday: timestamp
            streak: integer
          required: [first_name, native_language, learning_languages]
        """

    @Test("the profile is incomplete until every required field is set, and again once deleted", arguments: TestEngine.available)
    func profileCompleteness(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.lingoSchema, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail())
            let empty = try auth.decode(try await auth.send("GET", "/sync/v1/profile", token: session.accessToken), as: ProfileState.self)
            #expect(empty.fields == nil)
            #expect(empty.missing == ["first_name", "native_language", "learning_languages"])

            let partial = try auth.decode(
                try await auth.send("PATCH", "/sync/v1/profile", json: ["fields": ["first_name": "Ada", "streak": 3, "birthday": "1815-12-10T00:00:00Z"]], token: session.accessToken),
                as: ProfileState.self
            )
            #expect(partial.missing == ["native_language", "learning_languages"])
            #expect(partial.fields?["streak"] == .number(3))
            #expect(partial.fields?["birthday"] == .string("1815-12-10T00:00:00.000Z"))

            let complete = try auth.decode(
                try await auth.send("PATCH", "/sync/v1/profile", json: ["fields": ["native_language": "en", "learning_languages": ["fr", "de"]]], token: session.accessToken),
                as: ProfileState.self
            )
            #expect(complete.isComplete)
            #expect(complete.fields?["first_name"] == .string("Ada"), "earlier fields are kept")
            #expect(complete.fields?["learning_languages"] == .array([.string("fr"), .string("de")]))

            let unknown = try await auth.send("PATCH", "/sync/v1/profile", json: ["fields": ["nickname": "x"]], token: session.accessToken)
            #expect(unknown.status == 422)
            #expect(unknown.errorCode == "validation_failed")
            let mistyped = try await auth.send("PATCH", "/sync/v1/profile", json: ["fields": ["streak": "three"]], token: session.accessToken)
            #expect(mistyped.status == 422)

            try await server.server.storage.deleteProfile(userID: session.user.id, now: Date())
            let deleted = try auth.decode(try await auth.send("GET", "/sync/v1/profile", token: session.accessToken), as: ProfileState.self)
            #expect(deleted.fields == nil)
            #expect(!deleted.isComplete)
        }
    }
}
