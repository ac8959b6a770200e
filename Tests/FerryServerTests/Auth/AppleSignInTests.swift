import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Sign in with Apple (`grant_type=id_token`) and Apple's notices, against a stand-in for Apple's keys, on both engines.
@Suite("Accounts: Sign in with Apple")
struct AppleSignInTests {
    static func signIn(_ auth: AuthHarness, _ token: String, nonce: String?, data: [String: Any]? = nil) async throws -> HTTPClient.Reply {
        var body: [String: Any] = ["provider": "apple", "id_token": token]
        if let nonce { body["nonce"] = nonce }
        if let data { body["data"] = data }
        return try await auth.send("POST", "/auth/v1/token?grant_type=id_token", json: body)
    }

    @Test("the first sign-in creates the user with Apple's address and the app's name; later ones find it by subject", arguments: TestEngine.available)
    func firstAndLaterSignIns(_ engine: TestEngine) async throws {
        try await AppleStandIn.with { apple in
            try await RouterServer.with(engine, configure: { AuthHarness.fastHashing(&$0); apple.configure(&$0) }) { server in
                let auth = AuthHarness(server: server)
                let subject = "001234.\(UUID().uuidString.prefix(8)).0987"
                let email = "\(UUID().uuidString.prefix(8).lowercased())@privaterelay.appleid.com"
                let first = try await Self.signIn(
                    auth, apple.identityToken(subject: subject, email: email, isPrivateEmail: true, rawNonce: "raw-nonce-1"), nonce: "raw-nonce-1",
                    data: ["full_name": "Ada Lovelace"]
                )
                #expect(first.status == 200, "\(first.text)")
                let session = try auth.decode(first, as: AuthSession.self)
                #expect(session.user.email == email)
                #expect(session.user.userMetadata.objectValue?["full_name"] == .string("Ada Lovelace"))
                #expect(session.user.appMetadata.objectValue?["provider"] == .string("apple"))
                #expect(session.user.emailConfirmedAt != nil)
                // Apple sends the address only sometimes: the subject alone finds the user.
                let again = try await Self.signIn(auth, apple.identityToken(subject: subject, rawNonce: "raw-nonce-2"), nonce: "raw-nonce-2")
                #expect(again.status == 200, "\(again.text)")
                let later = try auth.decode(again, as: AuthSession.self)
                #expect(later.user.id == session.user.id && later.user.email == email)
                #expect(later.user.userMetadata.objectValue?["full_name"] == .string("Ada Lovelace"), "the name sent once is kept")
                // No address at all: a user with none shown.
                let silent = try await Self.signIn(auth, apple.identityToken(subject: "silent.\(UUID().uuidString)"), nonce: nil)
                #expect(silent.status == 200, "\(silent.text)")
                #expect(try auth.decode(silent, as: AuthSession.self).user.email == "")
            }
        }
    }

    @Test("tokens signed by another key, for another app, from another issuer, expired, with a wrong or missing nonce, or garbled are refused", arguments: TestEngine.available)
    func refusals(_ engine: TestEngine) async throws {
        try await AppleStandIn.with { apple in
            try await RouterServer.with(engine, configure: { AuthHarness.fastHashing(&$0); apple.configure(&$0) }) { server in
                let auth = AuthHarness(server: server)
                let subject = "refused.\(UUID().uuidString)"
                let cases: [(String, String?, String)] = [
                    (apple.identityToken(subject: subject, rawNonce: "n", forged: true), "n", "another key"),
                    (apple.identityToken(subject: subject, rawNonce: "n", audience: "com.other.app"), "n", "another audience"),
                    (apple.identityToken(subject: subject, rawNonce: "n", issuer: "https://evil.example"), "n", "another issuer"),
                    (apple.identityToken(subject: subject, rawNonce: "n", expiresIn: -5), "n", "expired"),
                    (apple.identityToken(subject: subject, rawNonce: "n"), "not-n", "a wrong nonce"),
                    (apple.identityToken(subject: subject, rawNonce: "n"), nil, "no nonce for a token with one"),
                    (apple.identityToken(subject: subject), "n", "a nonce for a token without one"),
                    ("a.b.c", "n", "garbled"),
                    ("eyJhbGciOiJub25lIiwia2lkIjoic3RhbmQtaW4tYXBwbGUta2V5In0.e30.", nil, "alg none"),
                    (String(repeating: "a", count: 20_000), nil, "oversized"),
                ]
                for (token, nonce, what) in cases {
                    let reply = try await Self.signIn(auth, token, nonce: nonce)
                    #expect(reply.status == 400 && reply.errorCode == "invalid_id_token", "\(what): \(reply.status) \(reply.text)")
                }
                let google = try await auth.send("POST", "/auth/v1/token?grant_type=id_token", json: ["provider": "google", "id_token": "x"])
                #expect(google.status == 400 && google.errorCode == "provider_disabled")
                let users = try await server.server.storage.users(offset: 0, limit: 10)
                #expect(users.total == 0, "nothing was created")
            }
        }
    }

    @Test("an existing account is linked only when Apple says the address is verified; a password on an unproven address goes", arguments: TestEngine.available)
    func linking(_ engine: TestEngine) async throws {
        try await AppleStandIn.with { apple in
            try await RouterServer.with(engine, configure: { AuthHarness.fastHashing(&$0); apple.configure(&$0) }) { server in
                let auth = AuthHarness(server: server)
                // A squatter signed up with the owner's address (this server confirms sign-ups without mail).
                let email = uniqueEmail("squatted")
                let squatter = try await auth.signUp(email)
                let unverified = try await Self.signIn(auth, apple.identityToken(subject: "u.\(UUID())", email: email, emailVerified: false), nonce: nil)
                #expect(unverified.status == 422 && unverified.errorCode == "email_exists")
                let verified = try await Self.signIn(auth, apple.identityToken(subject: "v.\(UUID())", email: email), nonce: nil)
                #expect(verified.status == 200)
                let linked = try auth.decode(verified, as: AuthSession.self)
                #expect(linked.user.id == squatter.user.id)
                #expect(linked.user.appMetadata.objectValue?["providers"] == .array([.string("email"), .string("apple")]))
                let squatterSignIn = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "correct horse 1"])
                #expect(squatterSignIn.status == 400 && squatterSignIn.errorCode == "invalid_credentials", "the unproven password went")
                #expect(try await auth.refresh(squatter.refreshToken).status == 400, "and the squatter's session with it")

                // An address an admin confirmed is proven: its password stays.
                let owned = uniqueEmail("owned")
                #expect(try await AdminAPITests.admin(server, "POST", "/users", json: ["email": owned, "password": "correct horse 1", "email_confirm": true]).status == 200)
                #expect(try await Self.signIn(auth, apple.identityToken(subject: "o.\(UUID())", email: owned), nonce: nil).status == 200)
                #expect(try await auth.signIn(owned).user.email == owned, "a proven password still signs in")
            }
        }
    }

    @Test("a signed consent-revoked notice ends the sessions it covers; a forged one changes nothing", arguments: TestEngine.available)
    func notices(_ engine: TestEngine) async throws {
        try await AppleStandIn.with { apple in
            try await RouterServer.with(engine, configure: { AuthHarness.fastHashing(&$0); apple.configure(&$0) }) { server in
                let auth = AuthHarness(server: server)
                let subject = "notice.\(UUID().uuidString)"
                let session = try auth.decode(try await Self.signIn(auth, apple.identityToken(subject: subject, email: uniqueEmail("apple")), nonce: nil), as: AuthSession.self)
                // Apple sends no API key.
                func post(_ payload: String) async throws -> HTTPClient.Reply {
                    try await server.send(
                        "POST", "/auth/v1/apple/notifications", headers: ["Content-Type": "application/json"],
                        body: try JSONSerialization.data(withJSONObject: ["payload": payload])
                    )
                }
                let forged = try await post(apple.notice(type: "consent-revoked", subject: subject, forged: true))
                #expect(forged.status == 400 && forged.errorCode == "invalid_id_token")
                #expect(try await auth.refresh(session.refreshToken).status == 200, "a forged notice ends nothing")
                #expect(try await post("{not a jws").status == 400)
                let malformed = try await server.send("POST", "/auth/v1/apple/notifications", headers: ["Content-Type": "application/json"], body: Data("[]".utf8))
                #expect(malformed.status == 400)
                let revoked = try await post(apple.notice(type: "consent-revoked", subject: subject))
                #expect(revoked.status == 200, "\(revoked.text)")
                let refresh = try await auth.refresh(session.refreshToken)
                #expect(refresh.status == 400 && refresh.errorCode == "refresh_token_not_found", "\(refresh.text)")
                // A new sign-in after the notice is not ended by the same notice delivered again.
                let later = try auth.decode(try await Self.signIn(auth, apple.identityToken(subject: subject), nonce: nil), as: AuthSession.self)
                #expect(try await post(apple.notice(type: "consent-revoked", subject: subject, eventTime: Date().addingTimeInterval(-30))).status == 200)
                #expect(try await auth.refresh(later.refreshToken).status == 200)
                #expect(try await post(apple.notice(type: "email-disabled", subject: subject, email: "x@privaterelay.appleid.com")).status == 200)
                #expect(try await post(apple.notice(type: "consent-revoked", subject: "unknown.subject")).status == 200)
            }
        }
    }

    @Test("without --apple-client-id the grant is provider_disabled")
    func notConfigured() async throws {
        try await RouterServer.with(.sqlite, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let reply = try await Self.signIn(auth, "a.b.c", nonce: nil)
            #expect(reply.status == 400 && reply.errorCode == "provider_disabled")
        }
    }
}
