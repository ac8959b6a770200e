import Foundation

/// The mail server the server sends its outgoing mail through, read from an `smtp://` or `smtps://` URL.
///
/// `smtp://[user:pass@]host[:port]` connects in the clear (port 25 unless given; 587 is the usual submission port)
/// and upgrades with STARTTLS whenever the server offers it; `smtps://` speaks TLS from the first byte (port 465
/// unless given). The password is never shown by ``description``.
public struct SMTPConfiguration: Sendable, CustomStringConvertible {
    /// The mail server's host name or IP address (without brackets).
    public var host: String
    /// The mail server's port.
    public var port: Int
    /// Whether the connection is TLS from the start (`smtps://`) rather than upgraded by STARTTLS when offered.
    public var usesImplicitTLS: Bool
    /// The user name for `AUTH`, percent-decoded; `nil` sends without authenticating.
    public var username: String?
    /// The password for `AUTH`, percent-decoded (empty when the URL has a user but no password); never logged or shown.
    public var password: String?
    /// The `From` of every message: `Name <address@host>` or a bare `address@host`.
    public var sender: String
    /// A PEM file of the certificate authorities to trust; `nil` trusts the system's roots.
    public var trustRootsFile: String?
    /// Whether the server's certificate is checked; only tests against a self-signed sink turn it off.
    public var verifiesCertificates = true
    /// How long each step (connecting, each reply) may take.
    public var timeout: Duration = .seconds(30)
    /// The name the client gives in `EHLO`.
    public var heloName = "localhost"
    /// Whether mail may go unencrypted to a server that is not on this machine and offers no STARTTLS (or strips it, as
    /// someone on the network could): off by default, since the mails carry sign-in codes and links.
    public var allowsPlaintext = false

    /// Reads `url` and checks `sender`.
    /// - Throws: ``ServerStartupError`` with code `invalid_smtp_url` for a URL Ferry cannot use, or
    ///   `invalid_configuration` for a sender that is not an address.
    public init(url: String, sender: String) throws {
        func invalid(_ reason: String) -> ServerStartupError {
            // The URL may hold a password: the message names the problem, never the URL.
            ServerStartupError(.invalidSMTPURL, "the SMTP URL \(reason); write smtp://[user:password@]host[:port] or smtps://…")
        }
        guard !url.contains(where: \.isNewline), !url.contains(" ") else { throw invalid("contains a space or a line break") }
        guard let schemeEnd = url.range(of: "://") else { throw invalid("has no scheme") }
        switch url[..<schemeEnd.lowerBound].lowercased() {
        case "smtp": usesImplicitTLS = false
        case "smtps": usesImplicitTLS = true
        default: throw invalid("must start with smtp:// or smtps://")
        }
        var authority = url[schemeEnd.upperBound...]
        if authority.hasSuffix("/") { authority.removeLast() }
        guard !authority.contains(where: { "/?#".contains($0) }) else { throw invalid("must not have a path, query or fragment") }

        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            let colon = userInfo.firstIndex(of: ":")
            let rawUser = userInfo[..<(colon ?? userInfo.endIndex)]
            let rawPassword = colon.map { userInfo[userInfo.index(after: $0)...] } ?? ""
            guard let user = rawUser.removingPercentEncoding, let password = rawPassword.removingPercentEncoding else {
                throw invalid("has a malformed percent escape in its user or password")
            }
            // AUTH PLAIN separates the fields with NUL; a line break has no business in either.
            guard !user.isEmpty, !(user + password).contains(where: { $0 == "\0" || $0.isNewline }) else {
                throw invalid("has an empty user, or a NUL or line break in its user or password")
            }
            username = user
            self.password = password
            authority = authority[authority.index(after: at)...]
        }

        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("has an unclosed '[' in its host") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { throw invalid("has text after its IPv6 host") }
            portText = rest.isEmpty ? nil : rest.dropFirst()
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
            portText = nil
        }
        guard !host.isEmpty, !host.contains(where: { "[]@:".contains($0) }) || IPAddress(host) != nil else {
            throw invalid("has no host, or a malformed one")
        }
        if let portText {
            guard let port = Int(portText), (1...65535).contains(port) else { throw invalid("has a port that is not 1–65535") }
            self.port = port
        } else {
            port = usesImplicitTLS ? 465 : 25
        }

        guard Self.address(in: sender) != nil else {
            throw ServerStartupError(
                .invalidConfiguration,
                "the mail sender '\(sender.filter { !$0.isNewline })' is not an address: write 'Name <address@example.com>' or 'address@example.com'"
            )
        }
        self.sender = sender
    }

    /// Describes the configuration without the password.
    public var description: String {
        let scheme = usesImplicitTLS ? "smtps" : "smtp"
        let user = username.map { "\($0):***@" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "SMTPConfiguration(\(scheme)://\(user)\(shownHost):\(port), sender: \(sender), verifiesCertificates: \(verifiesCertificates))"
    }

    /// The bare address of a mailbox written `Name <address>` or `address`, or `nil` when it is not one: no line break
    /// (header injection), no space or angle bracket, exactly one `@` with text on both sides, ASCII only (Ferry does
    /// not speak SMTPUTF8).
    static func address(in mailbox: String) -> String? {
        guard !mailbox.contains(where: { $0.isNewline || $0 == "\0" }) else { return nil }
        var address = Substring(mailbox.trimmingCharacters(in: .whitespaces))
        if address.hasSuffix(">"), let open = address.lastIndex(of: "<") {
            address = address[address.index(after: open)..<address.index(before: address.endIndex)]
        }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
            address.allSatisfy({ $0.isASCII && !$0.isWhitespace && !"<>()[],;\\\"".contains($0) })
        else { return nil }
        return String(address)
    }
}
