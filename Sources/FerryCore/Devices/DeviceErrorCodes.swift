extension ErrorCode {
    // Devices, sealed keys and encrypted spaces.

    /// The calling session is not bound to a registered device; register with `PUT /sync/v1/devices/{id}` first.
    public static let deviceNotRegistered: ErrorCode = "device_not_registered"
    /// The device was revoked; it is refused on every request.
    public static let deviceRevoked: ErrorCode = "device_revoked"
    /// Only a trusted device may do this (approve devices, revoke them, hand out keys).
    public static let deviceNotTrusted: ErrorCode = "device_not_trusted"
    /// No such device in this account.
    public static let deviceNotFound: ErrorCode = "device_not_found"
    /// The device id is registered with another public key (a device key is never replaced).
    public static let deviceKeyMismatch: ErrorCode = "device_key_mismatch"
    /// The device id belongs to another account.
    public static let deviceConflict: ErrorCode = "device_conflict"
    /// A device registration breaks a rule (name, type, host name, push token).
    public static let invalidDevice: ErrorCode = "invalid_device"
    /// A sealed key row breaks a rule (lengths, base64, version).
    public static let invalidSecret: ErrorCode = "invalid_secret"
    /// The key version is neither the space's current one nor the next, or another device started it first.
    public static let keyVersionConflict: ErrorCode = "key_version_conflict"
    /// The space is not end-to-end encrypted.
    public static let spaceNotEncrypted: ErrorCode = "space_not_encrypted"
    /// A record in an encrypted space carries a field value in clear.
    public static let encryptionRequired: ErrorCode = "encryption_required"
    /// The encrypted space has no key of that version yet (or the device holds none).
    public static let spaceKeyMissing: ErrorCode = "space_key_missing"
    /// Binding a session to a device needs proof that the caller holds the device's private key.
    public static let deviceProofRequired: ErrorCode = "device_proof_required"
    /// The proof does not answer a current challenge of this session for this device and key.
    public static let deviceProofInvalid: ErrorCode = "device_proof_invalid"
}

extension ErrorCode {
    // Push notifications.

    /// The server has no APNs set up (`--apns-key-file` and the rest), so it sends no notifications.
    public static let notificationsDisabled: ErrorCode = "notifications_disabled"
    /// A notification breaks a rule (empty, too large, text in clear for an encrypted space).
    public static let invalidNotification: ErrorCode = "invalid_notification"
}
