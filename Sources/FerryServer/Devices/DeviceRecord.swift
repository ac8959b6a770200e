import FerryCore
import Foundation

/// A device as the server stores it (`ferry_devices`).
struct DeviceRecord: Sendable, Hashable {
    /// The device's id, chosen by the device.
    var id: UUID
    /// The account it belongs to.
    var userID: UUID
    /// A name a person gave it.
    var name: String
    /// What sort of machine it is.
    var type: DeviceKind
    /// Its host name.
    var hostname: String
    /// Base64 of its X25519 public key; never replaced once registered.
    var publicKey: String
    /// Its push-notification token, if any.
    var pushToken: String?
    /// The APNs environment of ``pushToken``.
    var pushEnvironment: PushEnvironment?
    /// Whether it may hold encrypted spaces' keys.
    var trust: DeviceTrust
    /// When it was registered.
    var createdAt: Date
    /// When it last made a request (updated at most once per ``SyncLimits/lastSeenInterval``).
    var lastSeenAt: Date
    /// When it was revoked.
    var revokedAt: Date?

    /// The wire form, `isCurrent` when `currentDeviceID` is this device.
    func wire(currentDeviceID: UUID?) -> Device {
        Device(
            id: id, name: name, type: type, hostname: hostname, publicKey: publicKey, pushToken: pushToken,
            pushEnvironment: pushEnvironment, trust: trust, createdAt: createdAt, lastSeenAt: lastSeenAt,
            isCurrent: id == currentDeviceID
        )
    }
}

extension DeviceTrust {
    /// The trust a device moves to when `target` is asked for, or `nil` when nothing changes: revocation is final,
    /// and asking for the trust a device already has is a no-op (trust and revoke are idempotent).
    func changed(to target: DeviceTrust) -> DeviceTrust? {
        self == target || self == .revoked ? nil : target
    }
}
