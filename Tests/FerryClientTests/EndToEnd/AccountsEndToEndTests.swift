import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The SDK's Sign in with Apple and mailed codes against a live server, Apple's keys played by a stand-in and mail
/// received by a real SMTP sink (aiosmtpd).
@Suite("AuthClient end to end: Apple and mailed codes")
struct AccountsEndToEndTests {
    @Test("sign-up on a confirming server asks for the mailed code; verify signs in; a reset code sets a new password")
    func mailedCodes() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with { sink in
            try await LiveServer.with(.sqlite, configure: {
                $0.useFastPasswordHashing()
                $0.mail.smtp = try! SMTPConfiguration(url: sink.url, sender: "no-reply@example.com")
            }) { server in
                let auth = AuthClient(endpoint: ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey), store: InMemorySessionStore())
                let email = uniqueEmail("sdk")
                let pending = await #expect(throws: AuthError.self) { try await auth.signUp(email: email, password: "correct horse 1") }
                #expect(pending?.code == .emailNotConfirmed)
                #expect(try await auth.session == nil)
                let code = try #require(try await sink.waitForMail(to: email).body.firstMatch(of: /\b(\d{6})\b/)).1
                let session = try await auth.verify(email: email, code: String(code), type: .signup)
                #expect(try await auth.session == session && session.user.emailConfirmedAt != nil)

                try await auth.requestPasswordReset(email: email)
                let resetCode = try #require(try await sink.waitForMail(to: email, count: 2).body.firstMatch(of: /\b(\d{6})\b/)).1
                try await auth.verify(email: email, code: String(resetCode), type: .recovery)
                try await auth.updateUser(password: "new horse 2")
                try await auth.signOut()
                #expect(try await auth.signIn(email: email, password: "new horse 2").user.email == email)
            }
        }
    }

    @Test("Sign in with Apple keeps the name Apple sends once")
    func apple() async throws {
        try await AppleStandIn.with { apple in
            try await LiveServer.with(.sqlite, configure: { $0.useFastPasswordHashing(); apple.configure(&$0) }) { server in
                let auth = AuthClient(endpoint: ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey), store: InMemorySessionStore())
                let subject = "sdk.\(UUID().uuidString)"
                let first = try await auth.signInWithApple(
                    idToken: apple.identityToken(subject: subject, email: uniqueEmail("apple"), rawNonce: "nonce-1"), rawNonce: "nonce-1", fullName: "Ada Lovelace"
                )
                try await auth.signOut()
                let again = try await auth.signInWithApple(idToken: apple.identityToken(subject: subject, rawNonce: "nonce-2"), rawNonce: "nonce-2")
                #expect(again.user.id == first.user.id)
                #expect(again.user.userMetadata.objectValue?["full_name"] == .string("Ada Lovelace"))
                let refused = await #expect(throws: RemoteError.self) {
                    try await auth.signInWithApple(idToken: apple.identityToken(subject: subject, rawNonce: "a"), rawNonce: "b")
                }
                #expect(refused?.code == .invalidIDToken)
            }
        }
    }
}
