import Crypto
import FerrySecurity
import Foundation

/// The secret an invitee redeems: 192 random bits, base64url. The server stores only its SHA-256, so a copy of the
/// database holds no working code; a lookup by hash leaks nothing about the code through timing.
struct InvitationCode: Sendable, Hashable {
    let text: String

    /// A new random code.
    static func generate() -> InvitationCode { InvitationCode(text: SecureRandom.token(byteCount: 24)) }

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
