/// Every public error of Ferry: a stable ``code`` to switch on and a ``message`` a person can act on.
///
/// Codes are ``ErrorCode``s, declared beside the area they belong to and never reused with another meaning; messages
/// never hold a token, a password or a key. `description` is the message, so an error prints as a sentence; callers
/// that show codes (the CLI's `ferry: error: message (code)`) add them.
public protocol FerryError: Error, Sendable, CustomStringConvertible {
    /// The stable machine code.
    var code: ErrorCode { get }
    /// What went wrong and what to do, in a sentence.
    var message: String { get }
}

extension FerryError {
    /// The message.
    public var description: String { message }
}
