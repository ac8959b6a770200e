@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// Mail templates: the built-in ones, replacements from files, and files that cannot be templates.
@Suite("Mail templates")
struct MailTemplatesTests {
    @Test("a file replaces its kind's template; the placeholders are filled; other kinds keep the built-in text")
    func replacement() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try "Subject: Welcome to Notes, {{ .Email }}\nYour code: {{.Token}}\nLink: {{ .ConfirmationURL }}\nSite: {{ .SiteURL }}\n"
            .write(to: folder.url.appending(path: "signup.txt"), atomically: true, encoding: .utf8)
        let templates = try MailTemplates(directory: folder.url.path())
        let signup = templates.message(.signup, to: "ada@example.com", code: "123456", link: "https://x/verify?token=t", siteURL: "https://app")
        #expect(signup.subject == "Welcome to Notes, ada@example.com")
        #expect(signup.body == "Your code: 123456\nLink: https://x/verify?token=t\nSite: https://app\n")
        let recovery = templates.message(.recovery, to: "ada@example.com", code: "654321", link: "L", siteURL: "S")
        #expect(recovery.subject == "Reset your password" && recovery.body.contains("654321") && recovery.body.contains("L"))
    }

    @Test("a template without a Subject line, or not UTF-8, stops the server from starting")
    func invalid() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try "Your code is {{ .Token }}\n".write(to: folder.url.appending(path: "magiclink.txt"), atomically: true, encoding: .utf8)
        #expect(throws: ServerStartupError.self) { try MailTemplates(directory: folder.url.path()) }
        try Data([0xFF, 0xFE, 0x00]).write(to: folder.url.appending(path: "magiclink.txt"))
        #expect(throws: ServerStartupError.self) { try MailTemplates(directory: folder.url.path()) }
        #expect(throws: ServerStartupError.self) { try MailTemplates(directory: folder.url.path() + "/missing") }
    }
}
