/// Why a cryptographic operation failed: a stable ``code`` to switch on and a ``message`` a person can act on.
///
/// Messages never contain key material, plaintext or ciphertext; they name what was wrong and what to do.
public struct EncryptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable machine code.
    public var code: Code
    /// What went wrong, in a sentence a person can act on.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    public var description: String { "\(code): \(message)" }
}

extension EncryptionError {
    /// Stable machine codes of ``EncryptionError``; compare against these, never against messages.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The code as it is written in logs and on the wire.
        public var rawValue: String

        /// Wraps a raw code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Wraps a code literal.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The raw code.
        public var description: String { rawValue }

        /// A device public key is not the standard base64 of 32 bytes, or is a point no key agreement can use.
        public static let invalidPublicKey: Code = "invalid_public_key"
        /// A device private key is not the standard base64 of 32 bytes.
        public static let invalidPrivateKey: Code = "invalid_private_key"
        /// A space key does not have exactly 32 bytes.
        public static let invalidKeyLength: Code = "invalid_key_length"
        /// A space key version is not a positive integer.
        public static let invalidKeyVersion: Code = "invalid_key_version"
        /// A value was encrypted under another key version than the key offered to decrypt it.
        public static let keyVersionMismatch: Code = "key_version_mismatch"
        /// A sealed key or an encrypted value is not valid base64 or is too short to be one.
        public static let malformedCiphertext: Code = "malformed_ciphertext"
        /// Authentication failed: wrong key, wrong context (space, device, record, field) or altered bytes.
        public static let openFailed: Code = "open_failed"
        /// Sealing or encrypting failed inside the cryptographic library.
        public static let sealFailed: Code = "seal_failed"
        /// A collection or field name cannot be part of an encrypted value's context (empty, or contains `/`).
        public static let invalidFieldPath: Code = "invalid_field_path"
        /// This device holds no key of the space (at that version) yet.
        public static let spaceKeyMissing: Code = "space_key_missing"
        /// The device key could not be read from or written to its store.
        public static let keyStoreFailed: Code = "key_store_failed"
    }
}
