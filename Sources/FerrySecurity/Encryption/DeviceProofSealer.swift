import Crypto
import Foundation

/// Seals a device challenge's nonce to a device's public key, and opens it with the device's private key: the
/// device proves it holds the key by returning the nonce. HPKE as ``SpaceKeySealer`` (RFC 9180 base mode,
/// X25519, HKDF-SHA256, ChaCha20-Poly1305) with `info` = `ferry.device-proof.v1` and `aad` = the device id, so a
/// challenge for one device opens for no other purpose and no other device.
public enum DeviceProofSealer {
    static let info = Data("ferry.device-proof.v1".utf8)

    /// Seals `nonce` to the device `deviceID` whose public key is `publicKey`: (encapsulated key, ciphertext).
    public static func seal(_ nonce: Data, to publicKey: DevicePublicKey, deviceID: UUID) throws -> (encapsulatedKey: Data, ciphertext: Data) {
        try SpaceKeySealer.seal(nonce, info: info, aad: SpaceKeySealer.aad(deviceID: deviceID), to: publicKey.key)
    }

    /// Opens a challenge sealed to this device; throws `open_failed` when it was sealed to another key or device.
    public static func open(encapsulatedKey: Data, ciphertext: Data, deviceID: UUID, with keys: DeviceKeyPair) throws -> Data {
        do {
            return try SpaceKeySealer.open(
                encapsulatedKey: encapsulatedKey, ciphertext: ciphertext, info: info, aad: SpaceKeySealer.aad(deviceID: deviceID), with: keys.privateKey
            )
        } catch {
            throw EncryptionError(
                code: .openFailed,
                message: "This device cannot open the server's challenge: it was sealed to another key. Register with this device's own key."
            )
        }
    }
}
