import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real SMTP server on a free loopback port that keeps every message it accepts: aiosmtpd, run from
/// `Tests/Compatibility/smtp_sink.py` (scripts/test.sh installs it from PyPI).
///
/// ```swift
/// try await SMTPSink.with { sink in
///     try await SMTPClient(configuration: SMTPConfiguration(url: sink.url, sender: "no-reply@example.com")).send(message)
///     let mail = try await sink.waitForMail(to: "ada@example.com")
/// }
/// ```
/// It refuses recipients at `reject@…` with 550.
public final class SMTPSink: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// The self-signed certificate (PEM) it offers STARTTLS with, for `SMTPConfiguration.trustRootsFile`; `nil` without TLS.
    public let certificateFile: String?
    /// Whether it speaks TLS from the first byte (an `smtps://` server) rather than offering STARTTLS.
    public let isImplicitTLS: Bool
    /// Holds the certificate and, in `mail/`, the messages.
    private let folder: TemporaryFolder

    /// The folder the sink writes each message into (`<n>-<recipient>.eml`), for a checker in another process.
    public var mailFolder: String { folder.url.appending(path: "mail").path() }
    /// The python3 running the sink.
    private let process: ChildProcess

    /// `Tests/Compatibility/smtp_sink.py`, found from this file's place in the repository.
    private static let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Tests/Compatibility/smtp_sink.py").path()

    /// `smtp://127.0.0.1:PORT`, or `smtps://…` for an implicit-TLS sink.
    public var url: String { "\(isImplicitTLS ? "smtps" : "smtp")://127.0.0.1:\(port)" }

    /// Whether python3 can import aiosmtpd, so a sink can start.
    public static var isAvailable: Bool { PythonCheck.canImport("aiosmtpd") }

    /// Why a test that needs a sink cannot run where every service is required.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String {
            "python3 cannot import aiosmtpd, and \(TestEngine.requirePostgresVariable)=1 requires the mail tests to run (scripts/test.sh installs it)"
        }
    }

    /// Whether a sink can start: `false` (with a printed note) when aiosmtpd is missing, unless CI requires every service
    /// (`FERRY_REQUIRE_POSTGRES=1`), where it throws ``Unavailable`` so the test fails instead of skipping.
    public static func isReady() throws -> Bool {
        if isAvailable { return true }
        if TestEngine.isPostgresRequired { throw Unavailable() }
        print("⚠︎ Skipping a mail test: python3 cannot import aiosmtpd (scripts/test.sh installs it from PyPI).")
        return false
    }

    /// Starts a sink and waits until it listens.
    /// - Parameters:
    ///   - tls: offer STARTTLS with a new self-signed certificate for `localhost` and `127.0.0.1` (made with `openssl`).
    ///   - implicitTLS: speak TLS with that certificate from the first byte instead, as an `smtps://` server does.
    ///   - auth: require `AUTH` with this user and password (allowed without TLS: the connection is loopback).
    ///   - timeout: how long the sink may take to start.
    public init(
        tls: Bool = false, implicitTLS: Bool = false, auth: (user: String, password: String)? = nil, timeout: Duration = .seconds(20)
    ) async throws {
        let folder = try TemporaryFolder()
        let mailFolder = folder.url.appending(path: "mail").path()
        do {
            try FileManager.default.createDirectory(atPath: mailFolder, withIntermediateDirectories: true)
            var arguments = [Self.script, mailFolder]
            var certificateFile: String?
            if tls || implicitTLS {
                let (certificate, key) = try Self.makeCertificate(in: folder)
                arguments += ["--tls-cert", certificate, "--tls-key", key] + (implicitTLS ? ["--implicit-tls"] : [])
                certificateFile = certificate
            }
            if let auth { arguments += ["--auth", "\(auth.user):\(auth.password)"] }
            // Standard input is a pipe held here: if the test process dies, its end closes and the sink exits.
            let process = try ChildProcess(
                "python3", arguments: arguments, environment: ProcessInfo.processInfo.environment, standardInput: .pipe,
                standardError: .inherit
            )
            guard let port = await Self.readyPort(of: process, timeout: timeout) else {
                process.waitUntilExit()
                throw TestSupportError(
                    "the SMTP sink did not start: no 'ready PORT' within \(timeout) (exit status \(process.terminationStatus); its errors are above)"
                )
            }
            (self.port, self.certificateFile, self.isImplicitTLS) = (port, certificateFile, implicitTLS)
            (self.folder, self.process) = (folder, process)
        } catch {
            folder.remove()
            throw error
        }
    }

    /// Runs `body` against a new sink (see ``init(tls:implicitTLS:auth:timeout:)``), and stops the sink however `body` ends.
    public static func with<Result>(
        tls: Bool = false, implicitTLS: Bool = false, auth: (user: String, password: String)? = nil,
        _ body: (SMTPSink) async throws -> Result
    ) async throws -> Result {
        let sink = try await SMTPSink(tls: tls, implicitTLS: implicitTLS, auth: auth)
        defer { sink.stop() }
        return try await body(sink)
    }

    /// Stops the sink, waits for it to exit and deletes its messages.
    public func stop() {
        // Either ends it: the end of its input, or SIGTERM.
        try? process.standardInput?.close()
        process.terminate()
        process.waitUntilExit()
        folder.remove()
    }

    /// Every message received so far, in the order received; one per recipient.
    public func messages() -> [ReceivedMail] {
        let mailFolder = folder.url.appending(path: "mail")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: mailFolder.path())) ?? []
        // `<n>-<recipient>.eml`; names starting with a dot are still being written.
        let files = names.filter { !$0.hasPrefix(".") && $0.hasSuffix(".eml") }
            .compactMap { name in name.split(separator: "-", maxSplits: 1).first.flatMap { Int($0) }.map { ($0, name) } }
            .sorted { $0.0 < $1.0 }
        return files.compactMap { _, name in
            guard let data = FileManager.default.contents(atPath: mailFolder.appending(path: name).path()) else { return nil }
            let recipient = String(name.drop { $0 != "-" }.dropFirst().dropLast(".eml".count))
            return ReceivedMail(recipient: recipient, raw: String(decoding: data, as: UTF8.self))
        }
    }

    /// The `count`-th message to `recipient`, once it has arrived.
    /// - Throws: when fewer than `count` have arrived within `timeout`.
    public func waitForMail(to recipient: String, count: Int = 1, timeout: Duration = .seconds(20)) async throws -> ReceivedMail {
        let deadline = ContinuousClock.now + timeout
        while true {
            let received = messages().filter { $0.to.caseInsensitiveCompare(recipient) == .orderedSame }
            if received.count >= count { return received[count - 1] }
            guard ContinuousClock.now < deadline else {
                throw TestSupportError("\(received.count) of \(count) mails to \(recipient) arrived within \(timeout)")
            }
            // The sink has no way to signal a new file but the file itself: look again shortly.
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The port of the sink's `ready PORT` line, or `nil` when it exits or `timeout` passes first.
    private static func readyPort(of process: ChildProcess, timeout: Duration) async -> Int? {
        // `.some(port)` from the read (`nil` inside when the sink exited first), `.none` from the deadline.
        await withTaskGroup(of: Int??.self) { group in
            group.addTask {
                // A blocking read on a thread of its own; ended by the line, or by the pipe closing when the sink exits.
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread {
                        var line = Data()
                        while !line.contains(UInt8(ascii: "\n")) {
                            let chunk = process.standardOutput!.availableData
                            if chunk.isEmpty { break }
                            line += chunk
                        }
                        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
                        continuation.resume(returning: .some(words.count >= 2 && words[0] == "ready" ? Int(words[1]) : nil))
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .none
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // The deadline passed: killing the sink ends the read still waiting, which the group waits for.
            guard let port = first else {
                process.signal(SIGKILL)
                return nil
            }
            return port
        }
    }

    /// A self-signed certificate and its key, valid for `localhost` and `127.0.0.1`.
    private static func makeCertificate(in folder: TemporaryFolder) throws -> (certificate: String, key: String) {
        let certificate = folder.url.appending(path: "sink-cert.pem").path()
        let key = folder.url.appending(path: "sink-key.pem").path()
        let openssl = try ChildProcess(
            "openssl",
            arguments: [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost",
                "-days", "1", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
            ],
            environment: ProcessInfo.processInfo.environment, standardOutput: .null
        )
        // Its standard error is a few lines of progress dots, read once it has exited.
        guard openssl.waitUntilExit() == 0 else {
            let output = String(decoding: openssl.standardError?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            throw TestSupportError("openssl could not make the sink's certificate: \(output)")
        }
        return (certificate, key)
    }
}

/// One message an ``SMTPSink`` accepted, with its subject and body decoded.
public struct ReceivedMail: Sendable, Hashable {
    /// The envelope recipient (`RCPT TO`).
    public var to: String
    /// The message exactly as received (dot-stuffing undone), CRLF line endings.
    public var raw: String
    /// The `Subject` header, RFC 2047 encoded words decoded.
    public var subject: String { header("Subject").map(Self.decodingEncodedWords) ?? "" }
    /// The body, its transfer encoding (quoted-printable, base64) undone, with `\n` line endings.
    public var body: String {
        let text = raw.replacingOccurrences(of: "\r\n", with: "\n")
        let encoded = text.range(of: "\n\n").map { String(text[$0.upperBound...]) } ?? ""
        switch header("Content-Transfer-Encoding")?.lowercased() {
        case "quoted-printable":
            return Self.decodingQuotedPrintable(encoded.replacingOccurrences(of: "=\n", with: ""))
        case "base64":
            let bytes = Data(base64Encoded: encoded.filter { !$0.isWhitespace }) ?? Data()
            return String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        default:
            return encoded
        }
    }

    init(recipient: String, raw: String) {
        self.to = recipient
        self.raw = raw
    }

    /// The first header called `name` (any case), unfolded; `nil` when there is none.
    public func header(_ name: String) -> String? {
        let text = raw.replacingOccurrences(of: "\r\n", with: "\n")
        let head = text.range(of: "\n\n").map { text[..<$0.lowerBound] } ?? text[...]
        // A line starting with white space continues the header above it.
        let unfolded = head.replacingOccurrences(of: "\n ", with: " ").replacingOccurrences(of: "\n\t", with: " ")
        for line in unfolded.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].caseInsensitiveCompare(name) == .orderedSame else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// `text` with each `=?charset?B|Q?…?=` word decoded as UTF-8, and the white space between two such words dropped.
    static func decodingEncodedWords(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        var follows = false
        while let start = rest.range(of: "=?"), let end = wordEnd(in: rest[start.lowerBound...]),
            let decoded = decodingWord(rest[start.lowerBound..<end])
        {
            let before = rest[..<start.lowerBound]
            // White space between two encoded words is folding, not text.
            if !(follows && before.allSatisfy(\.isWhitespace)) { result += before }
            result += decoded
            follows = true
            rest = rest[end...]
        }
        return result + rest
    }

    /// One `=?charset?B|Q?text?=` word's text, read as UTF-8; `nil` when it is not one.
    private static func decodingWord(_ word: Substring) -> String? {
        let parts = word.dropFirst(2).dropLast(2).split(separator: "?", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        switch parts[1].uppercased() {
        case "B": return Data(base64Encoded: String(parts[2])).map { String(decoding: $0, as: UTF8.self) }
        case "Q": return decodingQuotedPrintable(parts[2].replacingOccurrences(of: "_", with: " "))
        default: return nil
        }
    }

    /// Where the encoded word starting `text` (at its `=?`) ends, just past its closing `?=`: after three `?`.
    private static func wordEnd(in text: Substring) -> Substring.Index? {
        var questionMarks = 0
        var index = text.index(text.startIndex, offsetBy: 2)
        while index < text.endIndex {
            if text[index] == "?" {
                questionMarks += 1
                let next = text.index(after: index)
                if questionMarks >= 3, next < text.endIndex, text[next] == "=" { return text.index(after: next) }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// `=XX` escapes decoded to bytes, read as UTF-8.
    static func decodingQuotedPrintable(_ text: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "="), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
