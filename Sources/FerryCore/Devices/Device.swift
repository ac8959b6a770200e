import Foundation

/// A device of an account, as `GET /sync/v1/devices` lists it (the `devices` system collection).
public struct Device: Sendable, Hashable, Codable {
    /// The device's id: also the `deviceId` of its pushes and the `aad` its space keys are sealed with.
    public var id: UUID
    /// A name a person gave it ("Ada's iPhone").
    public var name: String
    /// What sort of machine it is.
    public var type: DeviceKind
    /// Its host name, as the machine reports it.
    public var hostname: String
    /// Base64 of its 32-byte X25519 public key (`docs/encryption.md`).
    public var publicKey: String
    /// Its push-notification token, if it registered one.
    public var pushToken: String?
    /// The APNs environment of ``pushToken``.
    public var pushEnvironment: PushEnvironment?
    /// Whether it may hold encrypted spaces' keys.
    public var trust: DeviceTrust
    /// When it was registered.
    public var createdAt: Date
    /// When it last made a request.
    public var lastSeenAt: Date
    /// Whether this is the device that asked (the one the caller's session is bound to).
    public var isCurrent: Bool

    /// Creates a device.
    public init(
        id: UUID, name: String, type: DeviceKind, hostname: String, publicKey: String, pushToken: String? = nil,
        pushEnvironment: PushEnvironment? = nil, trust: DeviceTrust, createdAt: Date, lastSeenAt: Date, isCurrent: Bool
    ) {
        self.id = id
        self.name = name
        self.type = type
        self.hostname = hostname
        self.publicKey = publicKey
        self.pushToken = pushToken
        self.pushEnvironment = pushEnvironment
        self.trust = trust
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.isCurrent = isCurrent
    }

    enum CodingKeys: String, CodingKey {
        case id, name, type, hostname, publicKey, pushToken, pushEnvironment, trust, createdAt, lastSeenAt, isCurrent
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        type = try container.decode(DeviceKind.self, forKey: .type)
        hostname = try container.decode(String.self, forKey: .hostname)
        publicKey = try container.decode(String.self, forKey: .publicKey)
        pushToken = try container.decodeIfPresent(String.self, forKey: .pushToken)
        pushEnvironment = try container.decodeIfPresent(PushEnvironment.self, forKey: .pushEnvironment)
        trust = try container.decode(DeviceTrust.self, forKey: .trust)
        createdAt = try container.decodeTimestamp(forKey: .createdAt)
        lastSeenAt = try container.decodeTimestamp(forKey: .lastSeenAt)
        isCurrent = try container.decodeIfPresent(Bool.self, forKey: .isCurrent) ?? false
    }

    /// Ids in lowercase and times in ISO 8601, as everywhere in Ferry's protocol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.lowercasedText, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        try container.encode(hostname, forKey: .hostname)
        try container.encode(publicKey, forKey: .publicKey)
        try container.encodeIfPresent(pushToken, forKey: .pushToken)
        try container.encodeIfPresent(pushEnvironment, forKey: .pushEnvironment)
        try container.encode(trust, forKey: .trust)
        try container.encodeTimestamp(createdAt, forKey: .createdAt)
        try container.encodeTimestamp(lastSeenAt, forKey: .lastSeenAt)
        try container.encode(isCurrent, forKey: .isCurrent)
    }
}

/// The body of `PUT /sync/v1/devices/{id}`: registers the calling device, or updates it, and binds the caller's
/// session to it. The public key of a registered device never changes (`device_key_mismatch`).
public struct DeviceRegistration: Sendable, Hashable, Codable {
    /// A name a person gave it; 1–100 characters.
    public var name: String
    /// What sort of machine it is.
    public var type: DeviceKind
    /// Its host name; up to 255 characters.
    public var hostname: String
    /// Base64 of its 32-byte X25519 public key.
    public var publicKey: String
    /// Its push-notification token (up to 512 characters), if any.
    public var pushToken: String?
    /// The APNs environment of ``pushToken``.
    public var pushEnvironment: PushEnvironment?
    /// Proof that the caller holds the private key of ``publicKey``: needed to bind a session to the device, so
    /// knowing a device's id and public key (which `GET /sync/v1/devices` lists) is not enough to act as it.
    public var proof: DeviceProof?

    /// Creates a registration.
    public init(
        name: String, type: DeviceKind, hostname: String, publicKey: String, pushToken: String? = nil,
        pushEnvironment: PushEnvironment? = nil, proof: DeviceProof? = nil
    ) {
        self.proof = proof
        self.name = name
        self.type = type
        self.hostname = hostname
        self.publicKey = publicKey
        self.pushToken = pushToken
        self.pushEnvironment = pushEnvironment
    }
}

/// The body of `GET /sync/v1/devices`.
public struct DeviceList: Sendable, Hashable, Codable {
    /// The account's devices, oldest first, revoked ones included.
    public var devices: [Device]

    /// Creates a list.
    public init(devices: [Device]) { self.devices = devices }
}
