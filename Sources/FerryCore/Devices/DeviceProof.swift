import Foundation

/// The body of `POST /sync/v1/devices/{id}/challenge`.
public struct DeviceChallengeRequest: Sendable, Hashable, Codable {
    /// Base64 of the X25519 public key the device will register with.
    public var publicKey: String

    /// Creates a request.
    public init(publicKey: String) { self.publicKey = publicKey }
}

/// A secret the server sealed to a device's public key (HPKE, `ferry.device-proof.v1`): only the holder of the
/// private key opens it, and sends its nonce back as a ``DeviceProof``.
public struct DeviceChallenge: Sendable, Hashable, Codable {
    /// Standard base64 of HPKE's encapsulated key.
    public var encapsulatedKey: String
    /// Standard base64 of the sealed nonce with its tag.
    public var ciphertext: String
    /// When the challenge stops being accepted; the proof repeats it.
    public var expiresAt: String

    /// Creates a challenge.
    public init(encapsulatedKey: String, ciphertext: String, expiresAt: String) {
        self.encapsulatedKey = encapsulatedKey
        self.ciphertext = ciphertext
        self.expiresAt = expiresAt
    }
}

/// A challenge answered: part of the registration that binds a session to a device.
public struct DeviceProof: Sendable, Hashable, Codable {
    /// Standard base64 of the opened nonce.
    public var nonce: String
    /// The challenge's `expiresAt`, repeated as received.
    public var expiresAt: String

    /// Creates a proof.
    public init(nonce: String, expiresAt: String) {
        self.nonce = nonce
        self.expiresAt = expiresAt
    }
}
