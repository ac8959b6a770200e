import FerrySecurity

/// What a device needs to read and write end-to-end encrypted spaces: its key pair and the server's device routes.
///
/// ```swift
/// let keys = try FileDeviceKeyStore(folder: profileFolder).loadOrCreate()
/// let engine = SyncEngine(store: store, remote: client, encryption: EndToEndEncryption(deviceKeys: keys, remote: client))
/// ```
/// Without it a ``SyncEngine`` leaves encrypted spaces locked: nothing of them is pulled, and local changes to
/// them wait in the outbox.
public struct EndToEndEncryption: Sendable {
    /// This device's X25519 key pair; the space keys sealed to its public key open with it.
    public let deviceKeys: DeviceKeyPair
    /// The server's device and sealed-key routes.
    public let remote: any DeviceRemote

    /// Creates the setup.
    public init(deviceKeys: DeviceKeyPair, remote: any DeviceRemote) {
        self.deviceKeys = deviceKeys
        self.remote = remote
    }
}
