import ArgumentParser
import FerryServer
import Foundation

/// `ferry serve`'s options for passwords, Sign in with Apple and outgoing mail.
struct AccountOptions: ParsableArguments {
    @Option(name: .customLong("password-hash-cost"), help: "log2 of scrypt's N for new password hashes, 10 to 20; each step doubles a sign-in's CPU time and memory. Below 17 (OWASP's minimum) only for tests and development. [default: 17]")
    var passwordHashCost: Int?

    @Option(name: .customLong("apple-client-id"), help: "An audience Apple identity tokens may name: the app's bundle id, and its services id; repeat for several. Turns Sign in with Apple on.")
    var appleClientIDs: [String] = []

    @Option(name: .customLong("apple-keys-url"), help: "Where Apple publishes its signing keys. [default: https://appleid.apple.com/auth/keys]")
    var appleKeysURL: String?

    @Option(name: .customLong("smtp-url"), help: "smtp://[user:pass@]host:port (STARTTLS when offered) or smtps://… (implicit TLS); prefer FERRY_SMTP_URL. Turns mail on.")
    var smtpURL: String?

    @Option(name: .customLong("smtp-sender"), help: "The From address of Ferry's mail, such as 'Notes <no-reply@example.com>'.")
    var smtpSender: String?

    @Flag(name: .customLong("smtp-allow-plaintext"), help: "Send mail unencrypted to a mail server that offers no STARTTLS (it carries sign-in codes: only on a network you trust).")
    var smtpAllowPlaintext = false

    @Flag(name: .customLong("no-email-confirmation"), help: "With mail on, give sign-ups a session at once instead of waiting for the mailed code.")
    var noEmailConfirmation = false

    @Option(name: .customLong("mail-code-lifetime"), help: "Seconds a mailed code or link works. [default: 3600]")
    var mailCodeLifetime: Int?

    @Option(name: .customLong("mail-interval"), help: "Seconds between two mails of one kind to one address. [default: 60]")
    var mailInterval: Int?

    @Option(name: .customLong("mail-templates"), help: "A folder whose signup.txt, magiclink.txt, recovery.txt and email_change.txt replace the built-in mails.")
    var mailTemplates: String?

    @Option(name: .customLong("site-url"), help: "Where a mailed link lands after it is verified (the app's URL). [default: a short page on the server]")
    var siteURL: String?

    @Option(name: .customLong("redirect-url"), help: "Another URL a request's redirect_to may name (it and anything under it); repeat for several.")
    var redirectURLs: [String] = []

    func apply(to configuration: inout ServerConfiguration, environment: [String: String]) throws {
        if let cost = try Self.passwordHashCost(passwordHashCost, environment) {
            configuration.auth.passwordHashing.logN = cost
        }
        let clientIDs = appleClientIDs.isEmpty ? Self.list(environment["FERRY_APPLE_CLIENT_IDS"]) : appleClientIDs
        configuration.apple.clientIDs = clientIDs
        if let url = appleKeysURL ?? environment["FERRY_APPLE_KEYS_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), parsed.host != nil,
                  parsed.scheme == "https" || (parsed.scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(parsed.host ?? ""))
            else {
                throw CommandFailure(message: "--apple-keys-url must be an https URL (http only to a loopback address), not '\(url)'", status: 64)
            }
            configuration.apple.keysURL = url
        }
        let sender = smtpSender ?? environment["FERRY_SMTP_SENDER"]
        if let url = smtpURL ?? environment["FERRY_SMTP_URL"], !url.isEmpty {
            guard let sender, !sender.isEmpty else {
                throw CommandFailure(message: "--smtp-url needs --smtp-sender, the From address of Ferry's mail", status: 64)
            }
            do {
                var smtp = try SMTPConfiguration(url: url, sender: sender)
                smtp.allowsPlaintext = smtpAllowPlaintext
                configuration.mail.smtp = smtp
            } catch {
                throw CommandFailure(message: "--smtp-url or --smtp-sender: \(error)", status: 64)
            }
        }
        configuration.mail.confirmsSignUps = !noEmailConfirmation
        if let seconds = try ServeSettings.seconds(mailCodeLifetime, environment, "FERRY_MAIL_CODE_LIFETIME", flag: "--mail-code-lifetime") {
            configuration.mail.codeLifetime = seconds
        }
        if let seconds = try ServeSettings.seconds(mailInterval, environment, "FERRY_MAIL_INTERVAL", flag: "--mail-interval") {
            configuration.mail.sendInterval = seconds
        }
        configuration.mail.templatesDirectory = mailTemplates ?? environment["FERRY_MAIL_TEMPLATES"]
        if let url = siteURL ?? environment["FERRY_SITE_URL"], !url.isEmpty {
            configuration.mail.siteURL = try Self.redirectTarget(url, flag: "--site-url")
        }
        let redirects = redirectURLs.isEmpty ? Self.list(environment["FERRY_REDIRECT_URLS"]) : redirectURLs
        configuration.mail.redirectURLs = try redirects.map { try Self.redirectTarget($0, flag: "--redirect-url") }
    }

    /// `--password-hash-cost` or FERRY_PASSWORD_HASH_COST (which `ferry admin` reads too), or `nil` when neither is set.
    static func passwordHashCost(_ flag: Int?, _ environment: [String: String], flag name: String = "--password-hash-cost") throws -> Int? {
        try ServeSettings.count(flag, environment, "FERRY_PASSWORD_HASH_COST", flag: name, in: 10...20)
    }

    private static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A URL a link may land on: any scheme with a host (`https://app.example.com`) or an app's own (`notes://auth`).
    private static func redirectTarget(_ url: String, flag: String) throws -> String {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, !scheme.isEmpty, parsed.fragment == nil,
              !["javascript", "data", "file"].contains(scheme.lowercased())
        else {
            throw CommandFailure(message: "\(flag) must be a URL such as https://app.example.com or notes://auth, not '\(url)'", status: 64)
        }
        return url
    }
}
