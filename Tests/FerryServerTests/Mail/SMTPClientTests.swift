import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The SMTP client against a real SMTP server (aiosmtpd, from PyPI via `scripts/test.sh`): plain, STARTTLS, AUTH,
/// encodings, and the errors a retry loop relies on.
@Suite("SMTP client")
struct SMTPClientTests {
    /// A configuration for `url` with a short timeout, so a broken test fails quickly.
    static func configuration(_ url: String) throws -> SMTPConfiguration {
        var configuration = try SMTPConfiguration(url: url, sender: "Ferry <no-reply@example.com>")
        configuration.timeout = .seconds(10)
        return configuration
    }

    @Test("a message arrives over plain SMTP with its headers")
    func plain() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with { sink in
            try await SMTPClient(configuration: Self.configuration(sink.url))
                .send(MailMessage(to: "ada@example.com", subject: "Your code", body: "Your code is 123456.\n"))
            let mail = try await sink.waitForMail(to: "ada@example.com")
            #expect(mail.subject == "Your code")
            #expect(mail.body == "Your code is 123456.\n")
            #expect(mail.header("From") == "Ferry <no-reply@example.com>")
            #expect(mail.header("To") == "ada@example.com")
            #expect(mail.header("MIME-Version") == "1.0")
            #expect(mail.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(mail.header("Message-ID")?.hasSuffix("@example.com>") == true)
            #expect(mail.header("Date") != nil)
        }
    }

    @Test("a non-ASCII subject and body, and lines starting with dots, arrive unchanged")
    func encodings() async throws {
        guard try SMTPSink.isReady() else { return }
        let subject = "Grüße aus Köln — dein Code 🚢, a subject long enough to take several encoded words to write"
        let body = "Hallo Jürgen,\n.\n.leading dot\n..two dots\ntrailing space \nequals = sign\n" + String(repeating: "long ", count: 40) + "\n"
        try await SMTPSink.with { sink in
            try await SMTPClient(configuration: Self.configuration(sink.url)).send(MailMessage(to: "jurgen@example.com", subject: subject, body: body))
            let mail = try await sink.waitForMail(to: "jurgen@example.com")
            #expect(mail.subject == subject)
            #expect(mail.body == body)
            #expect(mail.raw.split(separator: "\r\n").allSatisfy { $0.count <= 78 }, "every line fits SMTP's limits")
        }
    }

    @Test("STARTTLS is used when offered: without checks against a self-signed sink, or checked against its certificate")
    func startTLS() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with(tls: true) { sink in
            var unchecked = try Self.configuration(sink.url)
            unchecked.verifiesCertificates = false
            try await SMTPClient(configuration: unchecked).send(MailMessage(to: "tls@example.com", subject: "unchecked", body: "one"))
            #expect(try await sink.waitForMail(to: "tls@example.com").subject == "unchecked")

            for host in ["127.0.0.1", "localhost"] {
                var checked = try Self.configuration("smtp://\(host):\(sink.port)")
                checked.trustRootsFile = sink.certificateFile
                try await SMTPClient(configuration: checked).send(MailMessage(to: "tls@example.com", subject: host, body: "two"))
            }
            #expect(try await sink.waitForMail(to: "tls@example.com", count: 3).subject == "localhost")

            // The system's roots do not know the sink's certificate: refused, and worth retrying (it may be renewed).
            let error = try await #require(throws: SMTPError.self) {
                try await SMTPClient(configuration: Self.configuration(sink.url)).send(MailMessage(to: "tls@example.com", subject: "x", body: "x"))
            }
            #expect(error.isTransient)
            #expect(sink.messages().count == 3)
        }
    }

    @Test("smtps:// speaks TLS from the first byte, and authenticates over it")
    func implicitTLS() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with(implicitTLS: true, auth: (user: "mailer", password: "secret")) { sink in
            var configuration = try Self.configuration("smtps://mailer:secret@localhost:\(sink.port)")
            configuration.trustRootsFile = sink.certificateFile
            #expect(sink.url.hasPrefix("smtps://") && configuration.usesImplicitTLS)
            try await SMTPClient(configuration: configuration).send(MailMessage(to: "tls@example.com", subject: "implicit", body: "ok"))
            #expect(try await sink.waitForMail(to: "tls@example.com").subject == "implicit")

            // Plain SMTP to a TLS port gets no greeting it can read: a transient failure, within the timeout.
            var plain = try Self.configuration("smtp://127.0.0.1:\(sink.port)")
            plain.timeout = .seconds(2)
            let error = try await #require(throws: SMTPError.self) {
                try await SMTPClient(configuration: plain).send(MailMessage(to: "tls@example.com", subject: "x", body: "x"))
            }
            #expect(error.isTransient)
        }
    }

    @Test("AUTH with percent-encoded credentials; a wrong password or none is a permanent error")
    func authentication() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with(tls: true, auth: (user: "mailer", password: "p@ss:w rd")) { sink in
            var configuration = try Self.configuration("smtp://mailer:p%40ss%3Aw%20rd@127.0.0.1:\(sink.port)")
            configuration.verifiesCertificates = false
            #expect(!configuration.description.contains("p%40ss") && !configuration.description.contains("p@ss"))
            try await SMTPClient(configuration: configuration).send(MailMessage(to: "auth@example.com", subject: "signed in", body: "ok"))
            #expect(try await sink.waitForMail(to: "auth@example.com").subject == "signed in")

            var wrong = try Self.configuration("smtp://mailer:nope@127.0.0.1:\(sink.port)")
            wrong.verifiesCertificates = false
            let refused = try await #require(throws: SMTPError.self) {
                try await SMTPClient(configuration: wrong).send(MailMessage(to: "auth@example.com", subject: "x", body: "x"))
            }
            #expect(refused.replyCode == 535 && !refused.isTransient && refused.code == .mailRejected)
            #expect(!refused.description.contains("nope"))

            var anonymous = try Self.configuration(sink.url)
            anonymous.verifiesCertificates = false
            let unauthenticated = try await #require(throws: SMTPError.self) {
                try await SMTPClient(configuration: anonymous).send(MailMessage(to: "auth@example.com", subject: "x", body: "x"))
            }
            #expect(unauthenticated.replyCode == 530 && !unauthenticated.isTransient)
        }
    }

    @Test("a refused recipient is a permanent error; a closed port a transient one")
    func errors() async throws {
        guard try SMTPSink.isReady() else { return }
        try await SMTPSink.with { sink in
            let refused = try await #require(throws: SMTPError.self) {
                try await SMTPClient(configuration: Self.configuration(sink.url)).send(MailMessage(to: "reject@example.com", subject: "x", body: "x"))
            }
            #expect(refused.replyCode == 550)
            #expect(!refused.isTransient)
            #expect(refused.description.contains("RCPT TO"))
        }
        let closed = try await #require(throws: SMTPError.self) {
            try await SMTPClient(configuration: Self.configuration("smtp://127.0.0.1:\(try freePort())"))
                .send(MailMessage(to: "ada@example.com", subject: "x", body: "x"))
        }
        #expect(closed.isTransient)
        #expect(closed.replyCode == nil)
        #expect(closed.code == .mailUnavailable)
    }

    @Test("a recipient with a line break is refused before connecting")
    func headerInjection() async throws {
        let error = try await #require(throws: SMTPError.self) {
            try await SMTPClient(configuration: Self.configuration("smtp://127.0.0.1:\(try freePort())"))
                .send(MailMessage(to: "ada@example.com\r\nBcc: eve@example.com", subject: "x", body: "x"))
        }
        #expect(!error.isTransient)
    }

    @Test("SMTP URLs: schemes, default ports, percent-decoded credentials, and the password never described")
    func configurationParsing() throws {
        let plain = try SMTPConfiguration(url: "smtp://mail.example.com", sender: "no-reply@example.com")
        #expect(plain.host == "mail.example.com" && plain.port == 25 && !plain.usesImplicitTLS && plain.username == nil)
        let submission = try SMTPConfiguration(url: "smtp://me%40example.com:s%3Acret@mail.example.com:587/", sender: "a@b.c")
        #expect(submission.port == 587 && submission.username == "me@example.com" && submission.password == "s:cret")
        #expect(!submission.description.contains("s:cret") && !submission.description.contains("s%3Acret"))
        let implicit = try SMTPConfiguration(url: "SMTPS://[::1]", sender: "Ferry <no-reply@example.com>")
        #expect(implicit.host == "::1" && implicit.port == 465 && implicit.usesImplicitTLS)

        for url in ["http://mail.example.com", "smtp://", "smtp://host:0", "smtp://host:99999", "smtp://host/path", "smtp://a b", "smtp://host\r\n"] {
            #expect(throws: ServerStartupError.self, "\(url)") { try SMTPConfiguration(url: url, sender: "a@b.c") }
        }
        for sender in ["no-reply@example.com\r\nBcc: eve@example.com", "Ferry", "Ferry <>", "a@b@c"] {
            #expect(throws: ServerStartupError.self, "\(sender)") { try SMTPConfiguration(url: "smtp://host", sender: sender) }
        }
    }

    @Test("the formatted message is CRLF text with short lines and an encoded non-ASCII sender name")
    func formatting() {
        let text = MailMessage(to: "ada@example.com", subject: "Hi", body: "a\nb\r\nc")
            .formatted(from: "Fähre <no-reply@example.com>", messageID: "id@example.com")
        #expect(text.hasPrefix("From: =?UTF-8?B?RsOkaHJl?= <no-reply@example.com>\r\nTo: ada@example.com\r\nSubject: Hi\r\n"))
        #expect(text.contains("\r\nMessage-ID: <id@example.com>\r\n"))
        #expect(text.hasSuffix("\r\n\r\na\r\nb\r\nc\r\n"))
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    }
}
