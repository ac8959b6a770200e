import Foundation

/// One plain-text email the server sends: a recipient, a subject and a body.
public struct MailMessage: Sendable, Hashable {
    /// The recipient: `address@host`, or `Name <address@host>`.
    public var to: String
    /// The subject, any Unicode; line breaks become spaces.
    public var subject: String
    /// The body, plain text in any Unicode, with any line endings.
    public var body: String

    /// Creates a message.
    public init(to: String, subject: String, body: String) {
        self.to = to
        self.subject = subject
        self.body = body
    }

    /// The message as RFC 5322 text with CRLF line endings, ready for SMTP `DATA` once dot-stuffed.
    ///
    /// Headers are ASCII (RFC 2047 encoded words for the rest) and the body is quoted-printable in lines of at most 76
    /// characters, so the text is 7-bit: any server takes it, with or without 8BITMIME.
    /// - Parameters:
    ///   - sender: the `From` mailbox, as ``SMTPConfiguration/sender``.
    ///   - date: the `Date` header's time.
    ///   - messageID: the `Message-ID` without its angle brackets; a random one at the sender's domain by default.
    public func formatted(from sender: String, date: Date = .now, messageID: String? = nil) -> String {
        let domain = SMTPConfiguration.address(in: sender)?.split(separator: "@").last.map(String.init) ?? "localhost"
        let headers = [
            "From: \(Self.encodedMailbox(sender))",
            "To: \(Self.encodedMailbox(to))",
            "Subject: \(Self.encodedHeaderText(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(messageID ?? "\(UUID().uuidString.lowercased())@\(domain)")>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
        ]
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + Self.quotedPrintable(body)
    }

    /// `Name <address>` with a non-ASCII name as encoded words; anything else as given, less line breaks.
    static func encodedMailbox(_ mailbox: String) -> String {
        let mailbox = mailbox.filter { !$0.isNewline }
        guard !mailbox.allSatisfy(\.isASCII), let open = mailbox.lastIndex(of: "<") else { return mailbox }
        let name = mailbox[..<open].trimmingCharacters(in: .whitespaces)
        return "\(encodedHeaderText(name)) \(mailbox[open...])"
    }

    /// Header text as is when it is short printable ASCII, else as RFC 2047 `=?UTF-8?B?…?=` words on folded lines.
    static func encodedHeaderText(_ text: String) -> String {
        let text = text.map { $0.isNewline ? " " : String($0) }.joined()
        if text.count <= 900, text.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) }), !text.contains("=?") {
            return text
        }
        // At most 39 bytes per word (52 base64 characters, 64 with the wrapper), so even the first line, after
        // `Subject: `, stays under RFC 2047's 76; never splitting a character, as a word must decode on its own.
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(character.utf8)
            if chunk.count + bytes.count > 39, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// `Tue, 01 Dec 2026 09:05:03 +0000`, as RFC 5322 §3.3 writes dates.
    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }

    /// The body's UTF-8 as quoted-printable (RFC 2045 §6.7): lines end in CRLF (the last one too), none longer than 76
    /// characters.
    static func quotedPrintable(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        // Any of CRLF, LF or CR ends a line: the canonical form of text is CRLF.
        let text = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // A final line break ends the last line rather than starting an empty one.
        for line in text.hasSuffix("\n") ? lines.dropLast() : lines[...] {
            let bytes = Array(line.utf8)
            var length = 0
            for (index, byte) in bytes.enumerated() {
                let isLast = index == bytes.count - 1
                // A space or tab ending a line would be stripped in transit, so it is escaped.
                let isLiteral = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !isLast)
                let encoded = isLiteral ? [byte] : [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                // Room for a soft break ("=") at the end of a full line.
                if length + encoded.count > 75 {
                    output += Array("=\r\n".utf8)
                    length = 0
                }
                output += encoded
                length += encoded.count
            }
            output += Array("\r\n".utf8)
        }
        return String(decoding: output, as: UTF8.self)
    }
}
