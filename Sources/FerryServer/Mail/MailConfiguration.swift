/// Outgoing mail (`--smtp-url`) and the rules of mailed codes: sign-up confirmation, passwordless sign-in, recovery and
/// address change (docs/auth.md, "Mail").
public struct MailConfiguration: Sendable {
    /// The SMTP server; `nil` sends no mail: sign-ups are confirmed at once and the mail endpoints answer
    /// `email_provider_disabled`.
    public var smtp: SMTPConfiguration?
    /// Whether a sign-up must confirm its address with the mailed code before it gets a session (GoTrue's default);
    /// `--no-email-confirmation` turns it off. Meaningless without ``smtp``.
    public var confirmsSignUps = true
    /// How long a mailed code and its link work.
    public var codeLifetime: Duration = .seconds(3600)
    /// The shortest time between two mails of one kind to one address.
    public var sendInterval: Duration = .seconds(60)
    /// Mails one client address may ask for per hour, whatever the recipients.
    public var mailsPerClient = 30
    /// Wrong codes tried against one code before it stops working.
    public var maximumCodeAttempts = 5
    /// A folder of mail templates replacing the built-in ones (`signup.txt`, `magiclink.txt`, `recovery.txt`,
    /// `email_change.txt`; see ``MailTemplates``).
    public var templatesDirectory: String?
    /// Where a mailed link lands after it is verified, unless the request named an allowed `redirect_to`; `nil` shows
    /// a short page saying the address is confirmed.
    public var siteURL: String?
    /// Other URLs a request's `redirect_to` may name (each allows itself and any URL starting with it).
    public var redirectURLs: [String] = []
    /// Mails waiting to be sent, at most; past it a mail is dropped and logged.
    public var queueLength = 1000
    /// The waits between attempts at a mail that failed for a reason that may pass (connection, 4xx).
    public var retryDelays: [Duration] = [.seconds(2), .seconds(10), .seconds(60)]

    /// Creates a configuration without mail.
    public init() {}

    /// Whether an SMTP server is set.
    public var isConfigured: Bool { smtp != nil }
}
