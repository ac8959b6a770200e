@testable import FerryServer
import FerryCore
import FerryTesting
import Foundation
import Testing

/// Access tokens are checked for their issuer, not only their signature.
@Suite("Auth: token issuer")
struct TokenIssuerTests {
    @Test("a token signed with the server's secret under another iss is refused with 401 bad_jwt", arguments: TestEngine.available)
    func foreignIssuer(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail("iss"))
            #expect(try await auth.send("GET", "/auth/v1/user", token: session.accessToken).status == 200)

            let foreign = await TokenIssuer(secret: server.server.keys.secret, issuer: "another-deployment")
            let (token, _) = try await foreign.makeAccessToken(
                userID: session.user.id, email: session.user.email, sessionID: try #require(UUID(uuidString: Self.sessionID(session.accessToken))),
                now: Date(), lifetime: .seconds(600)
            )
            let reply = try await auth.send("GET", "/auth/v1/user", token: token)
            #expect(reply.status == 401 && reply.errorCode == "bad_jwt")
        }
    }

    @Test("an API key sent as a user's token is refused with 401 bad_jwt that says which key it is", arguments: TestEngine.available)
    func apiKeyAsBearer(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            for (key, role) in [(server.server.keys.serviceRoleKey, "service_role"), (server.server.keys.anonKey, "anon")] {
                for path in ["/auth/v1/user", "/sync/v1/pull"] {
                    let reply = try await auth.send(path == "/auth/v1/user" ? "GET" : "POST", path, json: path == "/auth/v1/user" ? nil : [:], token: key)
                    #expect(reply.status == 401 && reply.errorCode == "bad_jwt", "\(role) \(path): \(reply.status)")
                    #expect(String(decoding: reply.body, as: UTF8.self).contains("the \(role) API key"), "\(role) \(path)")
                }
            }
        }
    }

    @Test("a verified token is remembered until it expires, then refused; a token altered by one byte is never taken for it")
    func rememberedUntilExpiry() async throws {
        let issuer = await TokenIssuer(secret: Array("a secret of at least thirty-two characters!".utf8), issuer: "ferry")
        let (token, expiresAt) = try await issuer.makeAccessToken(userID: UUID(), email: "a@example.com", sessionID: UUID(), now: Date(), lifetime: .seconds(2))
        #expect(try await issuer.verifyAccessToken(token).email == "a@example.com")
        #expect(try await issuer.verifyAccessToken(token).email == "a@example.com", "again, from memory")
        var altered = Array(token.utf8)
        altered[altered.count - 3] = altered[altered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        await #expect(throws: (any Error).self) { try await issuer.verifyAccessToken(String(decoding: altered, as: UTF8.self)) }
        try await Task.sleep(until: .now + .seconds(max(0, expiresAt.timeIntervalSinceNow) + 0.1), clock: .continuous)
        await #expect(throws: (any Error).self, "expired, though remembered") { try await issuer.verifyAccessToken(token) }
    }

    @Test("exp and iat are whole seconds, as GoTrue's (supabase-py refuses a token whose claims are fractional)")
    func wholeSeconds() async throws {
        let issuer = await TokenIssuer(secret: Array("a secret of at least thirty-two characters!".utf8), issuer: "ferry")
        let now = Date(timeIntervalSince1970: 1_790_000_000.75)
        let (token, expiresAt) = try await issuer.makeAccessToken(userID: UUID(), email: "a@example.com", sessionID: UUID(), now: now, lifetime: .seconds(3600))
        let claims = Self.claims(token)
        #expect(claims["iat"] as? NSNumber == 1_790_000_000 && claims["exp"] as? NSNumber == 1_790_003_600)
        #expect(Self.claimText(token).contains("\"exp\":1790003600,") && Self.claimText(token).contains("\"iat\":1790000000,"))
        #expect(expiresAt.timeIntervalSince1970 == 1_790_003_600, "the session's expires_at is the token's exp")
    }

    /// The `session_id` claim of a JWT, read without verifying it.
    static func sessionID(_ token: String) -> String {
        claims(token)["session_id"] as? String ?? ""
    }

    /// The claims of a JWT, read without verifying it.
    static func claims(_ token: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(claimText(token).utf8)) as? [String: Any]) ?? [:]
    }

    /// The payload of a JWT as its JSON text.
    static func claimText(_ token: String) -> String {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return "" }
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        return Data(base64Encoded: payload).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
