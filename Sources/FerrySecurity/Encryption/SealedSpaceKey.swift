import Foundation

/// A space key sealed to one device with HPKE: what a row of the `secrets` collection holds.
///
/// One sealed key exists per (space, device, key version). The server stores it and cannot open it;
/// only the device whose private key matches can, through ``SpaceKeySealer/open(_:spaceID:deviceID:with:)``.
public struct SealedSpaceKey: Sendable, Hashable {
    /// The version of the space key inside; it travels beside the sealed bytes, not inside them.
    public var keyVersion: Int
    /// HPKE's encapsulated key `enc`: the sender's ephemeral X25519 public key, 32 bytes.
    public var encapsulatedKey: Data
    /// HPKE's ciphertext: the 32-byte space key sealed with ChaCha20-Poly1305, followed by its 16-byte tag.
    public var ciphertext: Data

    /// Wraps the parts of a sealed key.
    public init(keyVersion: Int, encapsulatedKey: Data, ciphertext: Data) {
        self.keyVersion = keyVersion
        self.encapsulatedKey = encapsulatedKey
        self.ciphertext = ciphertext
    }

    /// Reads the parts from their standard base64 (with padding), as stored in the `secrets` collection.
    ///
    /// Throws `malformed_ciphertext` when either part is not canonical standard base64.
    public init(keyVersion: Int, encapsulatedKeyBase64: String, ciphertextBase64: String) throws {
        guard let encapsulatedKey = Data(canonicalBase64: encapsulatedKeyBase64) else {
            throw EncryptionError(code: .malformedCiphertext, message: Self.notBase64("encapsulated key"))
        }
        guard let ciphertext = Data(canonicalBase64: ciphertextBase64) else {
            throw EncryptionError(code: .malformedCiphertext, message: Self.notBase64("ciphertext"))
        }
        self.init(keyVersion: keyVersion, encapsulatedKey: encapsulatedKey, ciphertext: ciphertext)
    }

    /// The encapsulated key in standard base64 with padding.
    public var encapsulatedKeyBase64: String { encapsulatedKey.base64EncodedString() }

    /// The ciphertext (with its tag) in standard base64 with padding.
    public var ciphertextBase64: String { ciphertext.base64EncodedString() }

    private static func notBase64(_ part: String) -> String {
        "The sealed space key's \(part) is not standard base64 with padding; the secrets row is damaged, "
            + "so ask a trusted device to seal the space key to this device again."
    }
}
