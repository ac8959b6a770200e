import FerryServer
import FerryTesting
import Foundation
import Testing

/// `ferry signup` on a server with mail, `ferry verify`, `ferry send-code` and `ferry account password`, as a user types them.
@Suite("CLI: mailed codes")
struct CodeCommandTests {
    @Test("sign up, confirm with the mailed code, reset the password with another, sign in with the new one")
    func signUpVerifyReset() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with { sink in
            try await TestDatabase.with(.sqlite) { database in
                var configuration = database.endToEndConfiguration(schemaFile: ExampleSchemas.path("tabletnotes.yaml"))
                configuration.mail.smtp = try SMTPConfiguration(url: sink.url, sender: "no-reply@example.com")
                let server = try await LiveServer.start(configuration)
                let laptop = ClientCommandTests.Client(server: server.baseURL, apiKey: server.server.keys.anonKey, home: database.folder + "/laptop")
                let email = uniqueEmail("cli-code")
                let signedUp = try await laptop.run(["signup", email], password: "correct horse 1")
                #expect(signedUp.status == 0 && signedUp.stdout.contains("ferry verify \(email) CODE"), "\(signedUp.stdout) \(signedUp.stderr)")
                let code = String(try #require(try await sink.waitForMail(to: email).body.firstMatch(of: /\b(\d{6})\b/)).1)
                let wrong = try await laptop.run(["verify", email, code == "000000" ? "000001" : "000000"])
                #expect(wrong.status != 0 && wrong.stderr.contains("otp_expired"), "\(wrong.stderr)")
                let verified = try await laptop.run(["verify", email, code, "--no-sync"])
                #expect(verified.status == 0 && verified.stdout.contains("Signed in as \(email)"), "\(verified.stderr)")

                let sent = try await laptop.run(["send-code", email, "--reset-password"])
                #expect(sent.status == 0 && sent.stdout.contains("--type recovery"), "\(sent.stderr)")
                let resetCode = String(try #require(try await sink.waitForMail(to: email, count: 2).body.firstMatch(of: /\b(\d{6})\b/)).1)
                #expect(try await laptop.run(["verify", email, resetCode, "--type", "recovery", "--no-sync"]).status == 0)
                let changed = try await laptop.run(["account", "password", "--password-stdin"], input: "new horse 22\n")
                #expect(changed.status == 0, "\(changed.stderr)")
                #expect(try await laptop.run(["logout"]).status == 0)
                #expect(try await laptop.run(["login", email, "--no-sync"], password: "new horse 22").status == 0)
                #expect(try await laptop.run(["verify", email, "123456", "--type", "sms"]).status != 0)
                await server.stop()
            }
        }
    }
}
