import Crypto
import Foundation

/// The all-zero check of RFC 9180 §7.1.4, which swift-crypto leaves to its callers.
enum X25519Check {
    /// Whether X25519 of `privateKey` and `publicKey` is not the all-zero value (which only low-order points yield).
    static func agreesUsably(_ privateKey: Curve25519.KeyAgreement.PrivateKey, with publicKey: Curve25519.KeyAgreement.PublicKey) -> Bool {
        guard let secret = try? privateKey.sharedSecretFromKeyAgreement(with: publicKey) else { return false }
        return secret.withUnsafeBytes { bytes in bytes.reduce(0 as UInt8) { $0 | $1 } != 0 }
    }
}
