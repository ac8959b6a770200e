import Foundation

/// A space key sealed to one device (the `secrets` system collection): one row per (space, device, key version).
/// `enc` and `ciphertext` are HPKE's output in base64 (`docs/encryption.md`, format 1); the server cannot open it.
public struct SealedSecret: Sendable, Hashable, Codable {
    /// The encrypted space.
    public var spaceId: UUID
    /// The device it is sealed to.
    public var deviceId: UUID
    /// The key's version: 1 for the space's first key, one more after each rotation.
    public var keyVersion: Int
    /// Base64 of the 32-byte encapsulated key.
    public var enc: String
    /// Base64 of the 48-byte sealed key (32 bytes ‖ 16-byte tag).
    public var ciphertext: String
    /// The device that sealed it; set by the server from the caller's session.
    public var sealedBy: UUID?

    /// Creates a row.
    public init(spaceId: UUID, deviceId: UUID, keyVersion: Int, enc: String, ciphertext: String, sealedBy: UUID? = nil) {
        self.spaceId = spaceId
        self.deviceId = deviceId
        self.keyVersion = keyVersion
        self.enc = enc
        self.ciphertext = ciphertext
        self.sealedBy = sealedBy
    }

    enum CodingKeys: String, CodingKey { case spaceId, deviceId, keyVersion, enc, ciphertext, sealedBy }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(spaceId.lowercasedText, forKey: .spaceId)
        try container.encode(deviceId.lowercasedText, forKey: .deviceId)
        try container.encode(keyVersion, forKey: .keyVersion)
        try container.encode(enc, forKey: .enc)
        try container.encode(ciphertext, forKey: .ciphertext)
        try container.encodeIfPresent(sealedBy?.lowercasedText, forKey: .sealedBy)
    }
}

/// An encrypted space's key state, as the caller sees it.
public struct SpaceKeyState: Sendable, Hashable, Codable {
    /// The space.
    public var spaceId: UUID
    /// The current key version; 0 until a trusted device writes the first key.
    public var keyVersion: Int
    /// Set when a device that held the current key was revoked: a trusted device must rotate the key.
    public var rotationRequired: Bool

    /// Creates a state.
    public init(spaceId: UUID, keyVersion: Int, rotationRequired: Bool) {
        self.spaceId = spaceId
        self.keyVersion = keyVersion
        self.rotationRequired = rotationRequired
    }
}

/// A trusted device that should hold a space's current key and does not yet.
public struct MissingSecret: Sendable, Hashable, Codable {
    /// The space.
    public var spaceId: UUID
    /// The version to seal.
    public var keyVersion: Int
    /// The recipient device.
    public var deviceId: UUID
    /// Its public key, base64.
    public var publicKey: String

    /// Creates an entry.
    public init(spaceId: UUID, keyVersion: Int, deviceId: UUID, publicKey: String) {
        self.spaceId = spaceId
        self.keyVersion = keyVersion
        self.deviceId = deviceId
        self.publicKey = publicKey
    }
}

/// The body of `GET /sync/v1/secrets`: everything a device needs to hold and hand out encrypted spaces' keys.
public struct SecretsState: Sendable, Hashable, Codable {
    /// Every key sealed to the calling device, all versions.
    public var secrets: [SealedSecret]
    /// The key state of every encrypted space the caller belongs to.
    public var spaces: [SpaceKeyState]
    /// (space, trusted device) pairs lacking the current key, in spaces whose current key the caller holds.
    public var missing: [MissingSecret]

    /// Creates a state.
    public init(secrets: [SealedSecret], spaces: [SpaceKeyState], missing: [MissingSecret]) {
        self.secrets = secrets
        self.spaces = spaces
        self.missing = missing
    }
}

/// The body of `PUT /sync/v1/secrets`: sealed keys to store, each an upsert on (space, device, key version).
/// A row with the space's current version + 1 starts a new key version (creation or rotation).
public struct StoreSecretsRequest: Sendable, Hashable, Codable {
    /// The rows; at most 1,000.
    public var secrets: [SealedSecret]

    /// Creates a request.
    public init(secrets: [SealedSecret]) { self.secrets = secrets }
}

/// One row's outcome in ``StoreSecretsResponse``.
public struct SecretResult: Sendable, Hashable, Codable {
    /// `stored`, or `rejected` with a code and message.
    public var status: Status
    /// Why the row was rejected.
    public var code: ErrorCode?
    /// A message a person can act on.
    public var message: String?

    /// A row's outcome.
    public enum Status: String, Sendable, Hashable, Codable { case stored, rejected }

    /// Creates a result.
    public init(status: Status, code: ErrorCode? = nil, message: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
    }
}

/// The reply to `PUT /sync/v1/secrets`: one result per row, in order. The rows are stored in one transaction;
/// a rejected row never blocks the others.
public struct StoreSecretsResponse: Sendable, Hashable, Codable {
    /// One result per row of the request.
    public var results: [SecretResult]

    /// Creates a response.
    public init(results: [SecretResult]) { self.results = results }
}
