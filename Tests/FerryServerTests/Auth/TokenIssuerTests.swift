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

    @Test("a verified token is remembered until it expires, then refused; a token altered by one byte is never taken for it")
    func rememberedUntilExpiry() async throws {
        let issuer = await TokenIssuer(secret: Array("a secret of at least thirty-two characters!".utf8), issuer: "ferry")
        let (token, expiresAt) = try await issuer.makeAccessToken(userID: UUID(), email: "a@example.com", sessionID: UUID(), now: Date(), lifetime: .seconds(1))
        #expect(try await issuer.verifyAccessToken(token).email == "a@example.com")
        #expect(try await issuer.verifyAccessToken(token).email == "a@example.com", "again, from memory")
        var altered = Array(token.utf8)
        altered[altered.count - 3] = altered[altered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        await #expect(throws: (any Error).self) { try await issuer.verifyAccessToken(String(decoding: altered, as: UTF8.self)) }
        try await Task.sleep(until: .now + .seconds(max(0, expiresAt.timeIntervalSinceNow) + 0.1), clock: .continuous)
        await #expect(throws: (any Error).self, "expired, though remembered") { try await issuer.verifyAccessToken(token) }
    }

    /// The `session_id` claim of a JWT, read without verifying it.
    static func sessionID(_ token: String) -> String {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return "" }
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        guard let data = Data(base64Encoded: payload),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return "" }
        return object["session_id"] as? String ?? ""
    }
}
