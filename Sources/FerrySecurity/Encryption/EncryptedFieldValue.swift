import Foundation

/// An encrypted field value with the version of the space key it was encrypted under.
///
/// Its JSON form is `{"keyVersion": 2, "ciphertext": "<base64 of nonce ‖ ciphertext ‖ tag>"}`.
public struct EncryptedFieldValue: Sendable, Hashable, Codable {
    /// The version of the space key that encrypted ``ciphertext``.
    public var keyVersion: Int
    /// The standard base64 (with padding) of nonce ‖ ciphertext ‖ tag, from ``FieldCipher``.
    public var ciphertext: String

    /// Wraps a ciphertext and the version of its key.
    public init(keyVersion: Int, ciphertext: String) {
        self.keyVersion = keyVersion
        self.ciphertext = ciphertext
    }
}
