import Crypto
import Foundation

/// A device's X25519 key pair: the private half opens the space keys sealed to this device and never leaves it.
///
/// Create one with ``generate()`` on first use and keep it in the device's key store (the Keychain on Apple
/// platforms, a 0600 `device.key` file on Linux). Printing or dumping a key pair shows only its public key.
public struct DeviceKeyPair: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The number of raw bytes of an X25519 private key.
    public static let byteCount = 32

    let privateKey: Curve25519.KeyAgreement.PrivateKey

    init(privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
    }

    /// A new key pair from the system's secure random generator.
    public static func generate() -> DeviceKeyPair {
        DeviceKeyPair(privateKey: Curve25519.KeyAgreement.PrivateKey())
    }

    /// Restores a key pair from the 32 raw bytes of its private key; throws `invalid_private_key` for another length.
    public init(privateKeyRawRepresentation raw: Data) throws {
        guard raw.count == Self.byteCount, let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw) else {
            throw EncryptionError(
                code: .invalidPrivateKey,
                message: "A device private key must be \(Self.byteCount) bytes, not \(raw.count); the stored key is damaged."
            )
        }
        self.privateKey = key
    }

    /// Restores a key pair from the standard base64 (with padding) of its private key's 32 raw bytes.
    ///
    /// Throws `invalid_private_key` when `text` is not canonical base64 of 32 bytes.
    public init(privateKeyBase64 text: String) throws {
        guard let raw = Data(canonicalBase64: text) else {
            throw EncryptionError(
                code: .invalidPrivateKey,
                message: "A device private key must be standard base64 with padding of 32 bytes; the stored key is not base64."
            )
        }
        try self.init(privateKeyRawRepresentation: raw)
    }

    /// The public half, to publish in the `devices` collection.
    public var publicKey: DevicePublicKey {
        // The public key of a private key is never a low-order point: no validation needed.
        DevicePublicKey(derived: privateKey.publicKey)
    }

    /// The standard base64 (with padding) of the public key's 32 raw bytes.
    public var publicKeyBase64: String { privateKey.publicKey.rawRepresentation.base64EncodedString() }

    /// The private key's 32 raw bytes, for the device's own key store only: never log, print or send them.
    public var privateKeyRawRepresentation: Data { privateKey.rawRepresentation }

    /// The standard base64 (with padding) of the private key, for the device's own key store only.
    public var privateKeyBase64: String { privateKey.rawRepresentation.base64EncodedString() }

    /// Names the public key only; the private key is redacted.
    public var description: String { "DeviceKeyPair(publicKey: \(publicKeyBase64), privateKey: <redacted>)" }

    /// Same as ``description``: the private key is redacted.
    public var debugDescription: String { description }

    /// A mirror without the private key, so `dump` and debuggers do not show it.
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKeyBase64, "privateKey": "<redacted>"]) }
}
