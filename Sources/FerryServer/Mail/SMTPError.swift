import FerryCore

/// Why a message was not sent: the mail server's reply, or the connection's failure.
///
/// ``isTransient`` tells a retry loop whether to try again: a 4xx reply, a connection that failed or timed out, or a
/// TLS failure may pass; a 5xx reply, or a message or configuration Ferry will not send, will not. The message never
/// holds the password.
public struct SMTPError: FerryError {
    /// `mail_unavailable` when transient, `mail_rejected` when permanent.
    public var code: ErrorCode
    /// What failed, in a sentence.
    public var message: String
    /// The mail server's reply code (`550`), when it replied.
    public var replyCode: Int?
    /// The mail server's reply text, when it replied.
    public var replyText: String?
    /// Whether trying again later may succeed.
    public var isTransient: Bool

    /// Creates an error; its code follows from `isTransient`.
    public init(_ message: String, replyCode: Int? = nil, replyText: String? = nil, isTransient: Bool) {
        self.code = isTransient ? .mailUnavailable : .mailRejected
        self.message = message
        self.replyCode = replyCode
        self.replyText = replyText
        self.isTransient = isTransient
    }

    /// The server answered `reply` to `step` (a command's name, such as `RCPT TO`): permanent for 5xx, else transient.
    init(step: String, reply: SMTPReply) {
        let text = reply.lines.joined(separator: " / ")
        self.init(
            "the mail server refused \(step): \(reply.code) \(text)", replyCode: reply.code, replyText: text,
            isTransient: !(500..<600).contains(reply.code)
        )
    }

    /// A failure of this side that sending again cannot fix.
    static func refused(_ message: String) -> Self { .init(message, isTransient: false) }
    /// A failure of the connection that may pass.
    static func connection(_ message: String) -> Self { .init(message, isTransient: true) }
}

extension ErrorCode {
    /// The mail server refused the message for good (a 5xx reply), or Ferry will not send it as configured.
    public static let mailRejected: ErrorCode = "mail_rejected"
    /// The mail could not be sent now (a 4xx reply, no connection, a timeout); trying again later may succeed.
    public static let mailUnavailable: ErrorCode = "mail_unavailable"
}
