import Crypto
import Foundation

/// A device's X25519 public key, as it travels: the standard base64 (with padding) of its 32 raw bytes.
///
/// Creating one validates the key, so a value of this type can always be sealed to.
public struct DevicePublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The number of raw bytes of an X25519 public key.
    public static let byteCount = 32

    let key: Curve25519.KeyAgreement.PublicKey

    /// Wraps the public half of a key pair, which needs no validation.
    init(derived key: Curve25519.KeyAgreement.PublicKey) {
        self.key = key
    }

    /// Creates a key from its 32 raw bytes; throws `invalid_public_key` for another length or a low-order point.
    public init(rawRepresentation: Data) throws {
        guard rawRepresentation.count == Self.byteCount,
              let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: rawRepresentation)
        else {
            throw EncryptionError(
                code: .invalidPublicKey,
                message: "A device public key must be \(Self.byteCount) bytes, not \(rawRepresentation.count); "
                    + "send the device's key as created by DeviceKeyPair."
            )
        }
        // RFC 9180 §7.1.4: X25519 must not yield the all-zero secret. Only the low-order points do, for every
        // private key, so one trial agreement with a throwaway key finds them.
        guard X25519Check.agreesUsably(Curve25519.KeyAgreement.PrivateKey(), with: key) else {
            throw EncryptionError(
                code: .invalidPublicKey,
                message: "This device public key is a low-order point that no secret can be sealed to; "
                    + "the device must send the public key of its own key pair."
            )
        }
        self.key = key
    }

    /// Creates a key from the standard base64 (with padding) of its 32 raw bytes; throws `invalid_public_key` otherwise.
    public init(base64Encoded text: String) throws {
        guard let raw = Data(canonicalBase64: text) else {
            throw EncryptionError(
                code: .invalidPublicKey,
                message: "A device public key must be standard base64 with padding (44 characters for 32 bytes); "
                    + "this one is not base64 at all."
            )
        }
        try self.init(rawRepresentation: raw)
    }

    /// The 32 raw bytes.
    public var rawRepresentation: Data { key.rawRepresentation }

    /// The standard base64 (with padding) of the 32 raw bytes: the form stored in the `devices` collection.
    public var base64EncodedString: String { rawRepresentation.base64EncodedString() }

    /// The base64 form; a public key is not secret.
    public var description: String { base64EncodedString }

    /// Whether both keys have the same bytes.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }

    /// Hashes the key's bytes.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
}
