import FerryCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Something that delivers the server's mail: SMTP in production, a recorder in tests.
public protocol MailTransport: Sendable {
    /// Delivers `message`, or throws (an ``SMTPError`` for SMTP, whose `isTransient` says whether to retry).
    func send(_ message: MailMessage) async throws
}

/// Sends mail through an SMTP server, one connection per message.
///
/// Upgrades to TLS with STARTTLS whenever the server offers it (or speaks TLS from the start for `smtps://`),
/// authenticates with `AUTH PLAIN` (`LOGIN` when PLAIN is not offered) when the configuration has a user, and never
/// sends a password unencrypted except to a loopback address. Each step is bounded by the configuration's `timeout`.
public struct SMTPClient: MailTransport {
    /// Where and how to send.
    public let configuration: SMTPConfiguration
    /// Where the connections run.
    private let eventLoopGroup: any EventLoopGroup
    /// Says at debug level whether each mail was sent.
    private let logger: Logger

    /// Creates a client; nothing connects until ``send(_:)``.
    public init(
        configuration: SMTPConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "ferry.mail")
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Connects, hands `message` to the server and disconnects.
    /// - Throws: ``SMTPError``; permanent when the server refused with a 5xx reply or the message cannot be sent as
    ///   configured, transient otherwise.
    public func send(_ message: MailMessage) async throws {
        guard let sender = SMTPConfiguration.address(in: configuration.sender) else {
            throw SMTPError.refused("the sender '\(configuration.sender.filter { !$0.isNewline })' is not an address")
        }
        guard let recipient = SMTPConfiguration.address(in: message.to) else {
            throw SMTPError.refused("the recipient '\(message.to.filter { !$0.isNewline })' is not an address")
        }
        let connection = try await SMTPConnection.connect(
            host: configuration.host, port: configuration.port, tls: configuration.usesImplicitTLS ? try makeTLSContext() : nil,
            timeout: configuration.timeout, eventLoopGroup: eventLoopGroup
        )
        do {
            // Closing the channel fails the step under way, so a cancelled send ends at once.
            try await withTaskCancellationHandler {
                try await deliver(message, from: sender, to: recipient, over: connection)
            } onCancel: {
                connection.channel.close(promise: nil)
            }
        } catch {
            await connection.close()
            // The code and reply code only: a reply can quote the recipient's address.
            let reason = (error as? SMTPError).map { "\($0.code.rawValue) \($0.replyCode ?? 0)" } ?? "\(type(of: error))"
            logger.debug("mail not sent", metadata: ["ferry.mail.host": "\(configuration.host)", "ferry.mail.error": "\(reason)"])
            throw error
        }
        await connection.close()
        logger.debug("mail sent", metadata: ["ferry.mail.host": "\(configuration.host)"])
    }

    /// The conversation, from the greeting to `QUIT`.
    private func deliver(_ message: MailMessage, from sender: String, to recipient: String, over connection: SMTPConnection) async throws {
        try Self.require(220, of: "the connection", try await connection.readReply())
        var extensions = try await hello(connection)
        var isEncrypted = configuration.usesImplicitTLS
        if !isEncrypted, extensions["STARTTLS"] != nil {
            try Self.require(220, of: "STARTTLS", try await connection.send("STARTTLS"))
            try await connection.startTLS(try makeTLSContext(), serverName: SMTPConnection.serverName(for: configuration.host))
            isEncrypted = true
            extensions = try await hello(connection)
        }
        guard isEncrypted || connection.isLoopback || configuration.allowsPlaintext else {
            throw SMTPError.refused(
                "the mail server at \(configuration.host) offers no STARTTLS, and Ferry's mail carries sign-in codes; use smtps://, "
                    + "a server that offers STARTTLS, or --smtp-allow-plaintext on a network you trust"
            )
        }
        if let username = configuration.username {
            guard isEncrypted || connection.isLoopback else {
                throw SMTPError.refused(
                    "the mail server at \(configuration.host) offers no STARTTLS, and Ferry does not send the SMTP password "
                        + "unencrypted; use smtps:// or a server that offers STARTTLS"
                )
            }
            try await authenticate(username: username, password: configuration.password ?? "", mechanisms: extensions["AUTH"] ?? [], over: connection)
        }
        try Self.require(250, of: "MAIL FROM", try await connection.send("MAIL FROM:<\(sender)>"))
        try Self.require(250...251, of: "RCPT TO:<\(recipient)>", try await connection.send("RCPT TO:<\(recipient)>"))
        try Self.require(354, of: "DATA", try await connection.send("DATA"))
        let text = message.formatted(from: configuration.sender)
        try Self.require(250, of: "the message", try await connection.send(Self.dotStuffed(text) + "."))
        // The message is accepted: a failed QUIT must not make the caller send it again.
        _ = try? await connection.send("QUIT")
    }

    /// `EHLO`, falling back to `HELO` for a server without ESMTP; the extensions offered, by upper-case keyword.
    private func hello(_ connection: SMTPConnection) async throws -> [String: [String]] {
        // One word, so a configured name cannot smuggle in a command.
        let name = configuration.heloName.filter { !$0.isWhitespace }
        let reply = try await connection.send("EHLO \(name.isEmpty ? "localhost" : name)")
        guard (500..<600).contains(reply.code) else {
            try Self.require(250, of: "EHLO", reply)
            return Self.extensions(of: reply)
        }
        try Self.require(250, of: "HELO", try await connection.send("HELO \(name.isEmpty ? "localhost" : name)"))
        return [:]
    }

    /// `AUTH PLAIN`, or `AUTH LOGIN` when PLAIN is not offered; errors name the mechanism, never the credentials.
    private func authenticate(username: String, password: String, mechanisms: [String], over connection: SMTPConnection) async throws {
        func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        if mechanisms.contains("PLAIN") {
            try Self.require(235, of: "AUTH PLAIN", try await connection.send("AUTH PLAIN \(base64("\0\(username)\0\(password)"))"))
        } else if mechanisms.contains("LOGIN") {
            try Self.require(334, of: "AUTH LOGIN", try await connection.send("AUTH LOGIN"))
            try Self.require(334, of: "AUTH LOGIN", try await connection.send(base64(username)))
            try Self.require(235, of: "AUTH LOGIN", try await connection.send(base64(password)))
        } else {
            throw SMTPError.refused("the mail server at \(configuration.host) offers neither AUTH PLAIN nor AUTH LOGIN")
        }
    }

    /// The TLS settings: the configured trust roots, and no certificate check only when the configuration says so.
    private func makeTLSContext() throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = configuration.trustRootsFile { tls.trustRoots = .file(file) }
        if !configuration.verifiesCertificates { tls.certificateVerification = .none }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw SMTPError.refused("cannot set up TLS for mail (trust roots: \(configuration.trustRootsFile ?? "the system's")): \(error)")
        }
    }

    /// Throws unless `reply` has a code in `codes`.
    private static func require(_ codes: ClosedRange<Int>, of step: String, _ reply: SMTPReply) throws {
        guard codes.contains(reply.code) else { throw SMTPError(step: step, reply: reply) }
    }

    /// Throws unless `reply` has code `code`.
    private static func require(_ code: Int, of step: String, _ reply: SMTPReply) throws {
        try require(code...code, of: step, reply)
    }

    /// The keywords and parameters of an `EHLO` reply's lines after the first (`AUTH PLAIN LOGIN`; also `AUTH=PLAIN`,
    /// as some old servers write it).
    static func extensions(of reply: SMTPReply) -> [String: [String]] {
        var extensions: [String: [String]] = [:]
        for line in reply.lines.dropFirst() {
            let words = line.uppercased().split(whereSeparator: { $0 == " " || $0 == "=" }).map(String.init)
            guard let keyword = words.first else { continue }
            extensions[keyword, default: []] += words.dropFirst()
        }
        return extensions
    }

    /// `text` with a dot added before every line that starts with one (RFC 5321 §4.5.2), so no line ends the data early.
    static func dotStuffed(_ text: String) -> String {
        (text.hasPrefix(".") ? "." : "") + text.replacingOccurrences(of: "\r\n.", with: "\r\n..")
    }
}
