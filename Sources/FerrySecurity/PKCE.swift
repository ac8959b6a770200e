import Crypto
import Foundation

/// A Proof Key for Code Exchange pair (RFC 7636) with the `S256` method.
///
/// The client keeps ``verifier`` secret, sends ``challenge`` with the authorization request, and the verifier
/// with the code exchange; a stolen authorization code is useless without it.
public struct PKCE: Sendable, Hashable {
    /// The code verifier: 43–128 characters of `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
    public let verifier: String
    /// `BASE64URL(SHA256(ASCII(verifier)))`, without padding.
    public let challenge: String
    /// The challenge method; always `S256`.
    public var method: String { "S256" }

    /// Creates a pair from a fresh random verifier (32 random bytes, base64url: 43 characters).
    public init() {
        // 32 bytes of base64url are 43 characters, all in RFC 7636's unreserved set.
        self.init(validVerifier: SecureRandom.token(byteCount: 32))
    }

    /// Creates a pair from a given verifier; `nil` when it is not 43–128 unreserved characters.
    public init?(verifier: String) {
        guard (43...128).contains(verifier.count), verifier.unicodeScalars.allSatisfy(Self.isUnreserved) else { return nil }
        self.init(validVerifier: verifier)
    }

    private init(validVerifier verifier: String) {
        self.verifier = verifier
        self.challenge = Self.challenge(for: verifier)
    }

    /// The `S256` challenge of `verifier`.
    public static func challenge(for verifier: String) -> String {
        Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString()
    }

    /// Whether `verifier` matches `challenge` (constant time).
    public static func verify(verifier: String, challenge: String) -> Bool {
        ConstantTime.isEqual(Self.challenge(for: verifier), challenge)
    }

    private static func isUnreserved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "-", ".", "_", "~": true
        default: false
        }
    }
}
