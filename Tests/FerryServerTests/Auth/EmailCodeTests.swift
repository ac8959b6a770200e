import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Mailed codes and links (sign-up confirmation, passwordless sign-in, recovery, address change) through a real SMTP
/// sink (aiosmtpd), on both engines.
@Suite("Accounts: mailed codes")
struct EmailCodeTests {
    /// Runs `body` with a server that mails through a fresh sink; skipped (a failure in CI) without aiosmtpd.
    static func withMail(
        _ engine: TestEngine, configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (RouterServer, AuthHarness, SMTPSink) async throws -> Void
    ) async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with { sink in
            try await RouterServer.with(engine, configure: {
                AuthHarness.fastHashing(&$0)
                $0.mail.smtp = try! SMTPConfiguration(url: sink.url, sender: "Ferry <no-reply@example.com>")
                $0.mail.retryDelays = [.milliseconds(100)]
                configure(&$0)
            }) { server in
                try await body(server, AuthHarness(server: server), sink)
            }
        }
    }

    static func code(in mail: ReceivedMail) throws -> String {
        let match = try #require(mail.body.firstMatch(of: /\b(\d{6})\b/))
        return String(match.1)
    }

    static func linkToken(in mail: ReceivedMail) throws -> String {
        let match = try #require(mail.body.firstMatch(of: /verify\?token=([A-Za-z0-9_-]+)/))
        return String(match.1)
    }

    @Test("sign-up waits for the mailed code: no session, no password sign-in, a wrong code refused, the right one once", arguments: TestEngine.available)
    func signUpConfirmation(_ engine: TestEngine) async throws {
        try await Self.withMail(engine) { _, auth, sink in
            let email = uniqueEmail("confirm")
            let signedUp = try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "correct horse 1"])
            #expect(signedUp.status == 200)
            let body = try signedUp.json()
            #expect(body["access_token"] == nil && body["email"] as? String == email && body["email_confirmed_at"] is NSNull)
            let early = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "correct horse 1"])
            #expect(early.status == 400 && early.errorCode == "email_not_confirmed")
            let mail = try await sink.waitForMail(to: email)
            #expect(mail.subject == "Confirm your address")
            let code = try Self.code(in: mail)
            let wrong = try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": code == "123456" ? "654321" : "123456"])
            #expect(wrong.status == 403 && wrong.errorCode == "otp_expired")
            let verified = try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": code])
            #expect(verified.status == 200, "\(verified.text)")
            #expect(try auth.decode(verified, as: AuthSession.self).user.emailConfirmedAt != nil)
            let again = try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": code])
            #expect(again.status == 403 && again.errorCode == "otp_expired", "a code works once")
            #expect(try await auth.signIn(email).user.email == email)
        }
    }

    @Test("signing up again before the address is confirmed replaces the earlier password; a confirmed address is taken", arguments: TestEngine.available)
    func signUpAgain(_ engine: TestEngine) async throws {
        try await Self.withMail(engine, configure: { $0.mail.sendInterval = .milliseconds(1) }) { _, auth, sink in
            let email = uniqueEmail("again")
            #expect(try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "squatter horse 1"]).status == 200)
            let again = try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "owner horse 2"])
            let body = try again.json()
            #expect(again.status == 200 && body["access_token"] == nil)
            let code = try Self.code(in: try await sink.waitForMail(to: email, count: 2))
            #expect(try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": code]).status == 200)
            #expect(try await auth.signIn(email, password: "owner horse 2").user.email == email)
            let squatter = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "squatter horse 1"])
            #expect(squatter.status == 400)
            let taken = try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "late horse 3"])
            #expect(taken.status == 422 && taken.errorCode == "user_already_exists")
        }
    }

    @Test("signing up again and again mails the address once per interval")
    func signUpMailLimit() async throws {
        try await Self.withMail(.sqlite) { _, auth, sink in
            let email = uniqueEmail("flood")
            #expect(try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "correct horse 1"]).status == 200)
            let again = try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "correct horse 2"])
            #expect(again.status == 429 && again.errorCode == "over_email_send_rate_limit")
            _ = try await sink.waitForMail(to: email)
            #expect(sink.messages().filter { $0.to.lowercased() == email }.count == 1)
        }
    }

    @Test("a code stops working after five wrong tries", arguments: TestEngine.available)
    func attempts(_ engine: TestEngine) async throws {
        try await Self.withMail(engine) { _, auth, sink in
            let email = uniqueEmail("attempts")
            _ = try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "correct horse 1"])
            let code = try Self.code(in: try await sink.waitForMail(to: email))
            let wrong = code == "000000" ? "000001" : "000000"
            for _ in 0..<5 {
                #expect(try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": wrong]).status == 403)
            }
            let right = try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": code])
            #expect(right.status == 403 && right.errorCode == "otp_expired")
            for junk in ["12345", "abcdef", String(repeating: "9", count: 300), ""] {
                let reply = try await auth.send("POST", "/auth/v1/verify", json: ["type": "signup", "email": email, "token": junk])
                #expect(reply.status == 403)
            }
            let badType = try await auth.send("POST", "/auth/v1/verify", json: ["type": "sms", "email": email, "token": code])
            #expect(badType.status == 400 && badType.errorCode == "validation_failed")
        }
    }

    @Test("the mailed link confirms and lands on the site URL with the session; used again it lands with an error", arguments: TestEngine.available)
    func link(_ engine: TestEngine) async throws {
        try await Self.withMail(engine, configure: { $0.mail.siteURL = "notes://auth" }) { server, auth, sink in
            let email = uniqueEmail("link")
            _ = try await auth.send("POST", "/auth/v1/signup", json: ["email": email, "password": "correct horse 1"])
            let token = try Self.linkToken(in: try await sink.waitForMail(to: email))
            let opened = try await server.send("GET", "/auth/v1/verify?token=\(token)&type=signup&redirect_to=https://evil.example")
            #expect(opened.status == 303)
            let location = try #require(opened.header("Location"))
            #expect(location.hasPrefix("notes://auth#access_token="), "an unlisted redirect_to falls back to the site URL: \(location)")
            #expect(location.contains("refresh_token=") && location.contains("type=signup"))
            let reused = try await server.send("GET", "/auth/v1/verify?token=\(token)&type=signup")
            #expect(reused.status == 303 && reused.header("Location")?.contains("error_code=otp_expired") == true)
            #expect(try await auth.signIn(email).user.emailConfirmedAt != nil)
        }
    }

    @Test("sign-in codes and recovery: unknown addresses answer the same and get nothing; a second request waits", arguments: TestEngine.available)
    func passwordlessAndRecovery(_ engine: TestEngine) async throws {
        try await Self.withMail(engine, configure: { $0.mail.confirmsSignUps = false }) { _, auth, sink in
            let email = uniqueEmail("otp")
            _ = try await auth.signUp(email)
            let unknown = uniqueEmail("nobody")
            for path in ["/auth/v1/otp", "/auth/v1/recover"] {
                let known = try await auth.send("POST", path, json: ["email": email])
                let stranger = try await auth.send("POST", path, json: ["email": unknown])
                #expect(known.status == 200 && stranger.status == 200 && known.text == stranger.text)
                let tooSoon = try await auth.send("POST", path, json: ["email": unknown])
                #expect(tooSoon.status == 429 && tooSoon.errorCode == "over_email_send_rate_limit")
            }
            let signInMail = try await sink.waitForMail(to: email)
            let recoveryMail = try await sink.waitForMail(to: email, count: 2)
            #expect(Set([signInMail.subject, recoveryMail.subject]) == ["Your sign-in code", "Reset your password"])
            let signIn = signInMail.subject == "Your sign-in code" ? signInMail : recoveryMail
            let recovery = signInMail.subject == "Your sign-in code" ? recoveryMail : signInMail
            let session = try await auth.send("POST", "/auth/v1/verify", json: ["type": "email", "email": email, "token": try Self.code(in: signIn)])
            #expect(session.status == 200)
            let recovered = try auth.decode(
                try await auth.send("POST", "/auth/v1/verify", json: ["type": "recovery", "email": email, "token": try Self.code(in: recovery)]),
                as: AuthSession.self
            )
            let changed = try await auth.send("PUT", "/auth/v1/user", json: ["password": "new horse 22"], token: recovered.accessToken)
            #expect(changed.status == 200)
            #expect(try await auth.signIn(email, password: "new horse 22").user.email == email)
            #expect(sink.messages().allSatisfy { $0.to.lowercased() != unknown }, "nothing went to the unknown address")
            let invalid = try await auth.send("POST", "/auth/v1/otp", json: ["email": "not an address"])
            #expect(invalid.status == 400 && invalid.errorCode == "email_address_invalid")
        }
    }

    @Test("a sign-in code proving a squatted address ends the squatter's password and sessions; codes to an old address stop working", arguments: TestEngine.available)
    func squatter(_ engine: TestEngine) async throws {
        try await Self.withMail(engine, configure: { $0.mail.confirmsSignUps = false }) { _, auth, sink in
            let email = uniqueEmail("owner")
            let squatter = try await auth.signUp(email, password: "squatter horse 1")
            #expect(try await auth.send("POST", "/auth/v1/otp", json: ["email": email]).status == 200)
            let code = try Self.code(in: try await sink.waitForMail(to: email))
            let owner = try auth.decode(try await auth.send("POST", "/auth/v1/verify", json: ["type": "email", "email": email, "token": code]), as: AuthSession.self)
            let squatterSignIn = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "squatter horse 1"])
            #expect(squatterSignIn.status == 400, "the password set before the address was proven is gone")
            #expect(try await auth.refresh(squatter.refreshToken).status == 400)
            #expect(try await auth.refresh(owner.refreshToken).status == 200, "the owner's session is the new one")

            // A recovery code mailed to the old address stops working when the account moves to a new one.
            #expect(try await auth.send("POST", "/auth/v1/recover", json: ["email": email]).status == 200)
            let recovery = try Self.code(in: try await sink.waitForMail(to: email, count: 2))
            let new = uniqueEmail("moved")
            #expect(try await auth.send("PUT", "/auth/v1/user", json: ["email": new], token: owner.accessToken).status == 200)
            let change = try Self.code(in: try await sink.waitForMail(to: new))
            #expect(try await auth.send("POST", "/auth/v1/verify", json: ["type": "email_change", "email": new, "token": change]).status == 200)
            let stale = try await auth.send("POST", "/auth/v1/verify", json: ["type": "recovery", "email": email, "token": recovery])
            #expect(stale.status == 403 && stale.errorCode == "otp_expired")
        }
    }

    @Test("an address change takes effect when the code mailed to the new address comes back", arguments: TestEngine.available)
    func emailChange(_ engine: TestEngine) async throws {
        try await Self.withMail(engine, configure: { $0.mail.confirmsSignUps = false }) { _, auth, sink in
            let old = uniqueEmail("old"), new = uniqueEmail("new")
            let session = try await auth.signUp(old)
            let requested = try await auth.send("PUT", "/auth/v1/user", json: ["email": new], token: session.accessToken)
            let pending = try requested.json()
            #expect(requested.status == 200 && pending["new_email"] as? String == new)
            #expect(try await auth.signIn(old).user.email == old, "nothing changed yet")
            let taken = try await auth.send("PUT", "/auth/v1/user", json: ["email": old], token: session.accessToken)
            #expect(taken.status == 200, "the current address is no change")
            let code = try Self.code(in: try await sink.waitForMail(to: new))
            let verified = try await auth.send("POST", "/auth/v1/verify", json: ["type": "email_change", "email": new, "token": code])
            #expect(verified.status == 200, "\(verified.text)")
            #expect(try await auth.signIn(new).user.id == session.user.id)
            let oldSignIn = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": old, "password": "correct horse 1"])
            #expect(oldSignIn.status == 400)
        }
    }

    @Test("without SMTP sign-ups are confirmed at once, the mail endpoints say so, and generated links still work")
    func withoutMail() async throws {
        try await RouterServer.with(.sqlite, configure: AuthHarness.fastHashing) { server, _ in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail("nomail")
            let session = try await auth.signUp(email)
            #expect(session.user.emailConfirmedAt != nil)
            for path in ["/auth/v1/otp", "/auth/v1/recover"] {
                let reply = try await auth.send("POST", path, json: ["email": email])
                #expect(reply.status == 400 && reply.errorCode == "email_provider_disabled")
            }
            let change = try await auth.send("PUT", "/auth/v1/user", json: ["email": uniqueEmail("other")], token: session.accessToken)
            #expect(change.status == 400 && change.errorCode == "email_provider_disabled")
            let generated = try await AdminAPITests.admin(server, "POST", "/generate_link", json: ["type": "recovery", "email": email])
            #expect(generated.status == 200, "\(generated.text)")
            let properties = try generated.json()
            let code = try #require(properties["email_otp"] as? String)
            #expect(properties["verification_type"] as? String == "recovery" && (properties["action_link"] as? String)?.contains("/auth/v1/verify?token=") == true)
            let verified = try await auth.send("POST", "/auth/v1/verify", json: ["type": "recovery", "email": email, "token": code])
            #expect(verified.status == 200)
            let unknown = try await AdminAPITests.admin(server, "POST", "/generate_link", json: ["type": "magiclink", "email": uniqueEmail("x")])
            #expect(unknown.status == 404)
            let refused = try await AdminAPITests.admin(server, "POST", "/generate_link", bearer: session.accessToken, json: ["type": "magiclink", "email": email])
            #expect(refused.status == 403)
        }
    }
}
