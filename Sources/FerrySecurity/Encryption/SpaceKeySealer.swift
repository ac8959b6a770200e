import Crypto
import Foundation

/// Seals a space key to a device's public key and opens it with that device's private key, with HPKE.
///
/// RFC 9180 base mode, suite DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305, with
/// `info` = `ferry.space-key.v1:<space id>` and `aad` = `<device id>` (UTF-8, ids as lowercase UUIDs),
/// so a sealed key opens only for the space and the device it was sealed for.
public enum SpaceKeySealer {
    /// The HPKE cipher suite of every sealed space key.
    static let ciphersuite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly

    /// The prefix of `info`; the `v1` changes only with a new sealing format.
    static let infoPrefix = "ferry.space-key.v1:"

    /// Seals `key` to the device `deviceID` whose public key is `devicePublicKey`, for the space `spaceID`.
    ///
    /// Each call uses a fresh ephemeral key, so sealing the same key twice gives different bytes.
    public static func seal(_ key: SpaceKey, spaceID: UUID, to devicePublicKey: DevicePublicKey, deviceID: UUID) throws -> SealedSpaceKey {
        let (encapsulatedKey, ciphertext) = try seal(
            key.rawRepresentation,
            info: info(spaceID: spaceID),
            aad: aad(deviceID: deviceID),
            to: devicePublicKey.key
        )
        return SealedSpaceKey(keyVersion: key.version, encapsulatedKey: encapsulatedKey, ciphertext: ciphertext)
    }

    /// Opens `sealed` with this device's key pair; `spaceID` and `deviceID` must be the ones it was sealed for.
    ///
    /// Throws `malformed_ciphertext` when the parts have impossible lengths, `open_failed` when the key pair,
    /// the space, the device or any byte does not match, and `invalid_key_version` for a version below 1.
    public static func open(_ sealed: SealedSpaceKey, spaceID: UUID, deviceID: UUID, with deviceKey: DeviceKeyPair) throws -> SpaceKey {
        let raw = try open(
            encapsulatedKey: sealed.encapsulatedKey,
            ciphertext: sealed.ciphertext,
            info: info(spaceID: spaceID),
            aad: aad(deviceID: deviceID),
            with: deviceKey.privateKey
        )
        guard raw.count == SpaceKey.byteCount else {
            throw EncryptionError(
                code: .invalidKeyLength,
                message: "The sealed secret opened but holds \(raw.count) bytes, not a \(SpaceKey.byteCount)-byte space key; "
                    + "ask a trusted device to seal the space key to this device again."
            )
        }
        return try SpaceKey(rawRepresentation: raw, version: sealed.keyVersion)
    }

    /// The UTF-8 bytes of `ferry.space-key.v1:<space id>`, the id as a lowercase UUID.
    static func info(spaceID: UUID) -> Data {
        Data((infoPrefix + spaceID.uuidString.lowercased()).utf8)
    }

    /// The UTF-8 bytes of the recipient device id as a lowercase UUID.
    static func aad(deviceID: UUID) -> Data {
        Data(deviceID.uuidString.lowercased().utf8)
    }

    /// HPKE single-shot seal in base mode: returns `enc` and the ciphertext with its tag.
    static func seal(_ plaintext: Data, info: Data, aad: Data, to recipient: Curve25519.KeyAgreement.PublicKey) throws -> (Data, Data) {
        do {
            var sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: ciphersuite, info: info)
            let ciphertext = try sender.seal(plaintext, authenticating: aad)
            return (sender.encapsulatedKey, ciphertext)
        } catch {
            throw EncryptionError(code: .sealFailed, message: "Sealing the space key failed in the cryptographic library (\(type(of: error))).")
        }
    }

    /// HPKE single-shot open in base mode, the path both ``open(_:spaceID:deviceID:with:)`` and the RFC 9180 vectors take.
    static func open(
        encapsulatedKey: Data,
        ciphertext: Data,
        info: Data,
        aad: Data,
        with privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws -> Data {
        guard encapsulatedKey.count == DevicePublicKey.byteCount else {
            throw EncryptionError(
                code: .malformedCiphertext,
                message: "A sealed space key's encapsulated key must be \(DevicePublicKey.byteCount) bytes, not \(encapsulatedKey.count); "
                    + "ask a trusted device to seal the space key to this device again."
            )
        }
        guard ciphertext.count > tagByteCount else {
            throw EncryptionError(
                code: .malformedCiphertext,
                message: "A sealed space key's ciphertext must be longer than its \(tagByteCount)-byte tag, not \(ciphertext.count) bytes; "
                    + "ask a trusted device to seal the space key to this device again."
            )
        }
        // RFC 9180 §7.1.4: refuse a low-order `enc`, whose shared secret would be zero whatever the private key.
        guard let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: encapsulatedKey),
              X25519Check.agreesUsably(privateKey, with: ephemeral)
        else {
            throw openFailed
        }
        do {
            var recipient = try HPKE.Recipient(privateKey: privateKey, ciphersuite: ciphersuite, info: info, encapsulatedKey: encapsulatedKey)
            return try recipient.open(ciphertext, authenticating: aad)
        } catch {
            throw openFailed
        }
    }

    /// The Poly1305 tag length.
    static let tagByteCount = 16

    private static let openFailed = EncryptionError(
        code: .openFailed,
        message: "This device cannot open the sealed space key: it was sealed to another device or space, or altered. "
            + "Ask a trusted device to seal the current space key to this device (it may have been revoked)."
    )
}
