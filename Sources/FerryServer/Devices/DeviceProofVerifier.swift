import Crypto
import FerryCore
import FerrySecurity
import Foundation

/// Challenges a device to prove it holds its private key, and checks the answer, without storing anything: the
/// nonce is an HMAC, under a key derived from the server's secret, of the session, the device id, the public key
/// and the expiry. Every instance sharing the secret checks a challenge any of them made, and a proof works only for
/// the session, device and key it was made for, until it expires.
struct DeviceProofVerifier: Sendable {
    private let key: SymmetricKey
    /// How long a challenge may be answered.
    let lifetime: TimeInterval

    init(secret: [UInt8], lifetime: TimeInterval = 300) {
        key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array("ferry device proofs".utf8), using: SymmetricKey(data: secret)))
        self.lifetime = lifetime
    }

    /// A new challenge for `publicKey` (already validated) of device `deviceID`, for this session.
    func challenge(sessionID: UUID, deviceID: UUID, publicKey: DevicePublicKey, now: Date) throws -> DeviceChallenge {
        let expiresAt = Timestamp.format(now.addingTimeInterval(lifetime))
        let nonce = self.nonce(sessionID: sessionID, deviceID: deviceID, publicKey: publicKey, expiresAt: expiresAt)
        let sealed = try DeviceProofSealer.seal(nonce, to: publicKey, deviceID: deviceID)
        return DeviceChallenge(
            encapsulatedKey: sealed.encapsulatedKey.base64EncodedString(), ciphertext: sealed.ciphertext.base64EncodedString(), expiresAt: expiresAt
        )
    }

    /// Checks a proof; 403 `device_proof_required` without one, `device_proof_invalid` for a wrong or expired one.
    func verify(_ proof: DeviceProof?, sessionID: UUID, deviceID: UUID, publicKey: DevicePublicKey, now: Date) throws {
        guard let proof else {
            throw ServiceError(.forbidden, .deviceProofRequired,
                "Binding this session to device \(deviceID.lowercasedText) needs proof that it holds the device's private key: POST /sync/v1/devices/{id}/challenge, open the challenge with the key, and send its nonce as proof."
            )
        }
        let invalid = ServiceError(.forbidden, .deviceProofInvalid,
            "The proof does not answer a current challenge of this session for this device and key; ask for a new challenge."
        )
        guard let expiry = Timestamp.parse(proof.expiresAt), expiry > now, expiry <= now.addingTimeInterval(lifetime + 60),
              let presented = Data(base64Encoded: proof.nonce) else { throw invalid }
        let expected = nonce(sessionID: sessionID, deviceID: deviceID, publicKey: publicKey, expiresAt: proof.expiresAt)
        guard ConstantTime.isEqual(Array(presented), Array(expected)) else { throw invalid }
    }

    private func nonce(sessionID: UUID, deviceID: UUID, publicKey: DevicePublicKey, expiresAt: String) -> Data {
        let message = ["ferry.device-proof.v1", sessionID.lowercasedText, deviceID.lowercasedText, publicKey.base64EncodedString, expiresAt]
            .joined(separator: "\n")
        return Data(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key))
    }
}
