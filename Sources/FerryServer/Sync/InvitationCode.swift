import Crypto
import FerrySecurity
import Foundation

/// The secret an invitee redeems: `inv_` and 192 random bits in base64url. The server stores only its SHA-256, so a
/// copy of the database holds no working code; a lookup by hash leaks nothing about the code through timing.
///
/// The prefix keeps a code from starting with `-`, which a command line reads as an option (`ferry spaces join -x…`
/// failed, or worse, matched a flag), and lets secret scanners recognise a leaked code.
struct InvitationCode: Sendable, Hashable {
    let text: String

    /// A new random code.
    static func generate() -> InvitationCode { InvitationCode(text: "inv_" + SecureRandom.token(byteCount: 24)) }

    /// A code as the invitee typed or pasted it (surrounding whitespace dropped); `nil` when it cannot be one.
    init?(typed: String) {
        let text = typed.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (16...128).contains(text.utf8.count), text.unicodeScalars.allSatisfy({ $0.isASCII && !$0.properties.isWhitespace }) else { return nil }
        self.text = text
    }

    private init(text: String) { self.text = text }

    /// What the database keys the invitation by.
    var hash: Data { Data(SHA256.hash(data: Data(text.utf8))) }
}
