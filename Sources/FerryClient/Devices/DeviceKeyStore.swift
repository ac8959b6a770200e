import FerrySecurity

/// Keeps this device's X25519 key pair on the device: a 0600 file (``FileDeviceKeyStore``), memory (``InMemoryDeviceKeyStore``) or
/// the Keychain (`KeychainDeviceKeyStore`, Apple platforms).
///
/// The private key never leaves the device; only its public key is published in the `devices` collection.
/// A stored key that cannot be read is an error, never silently replaced: a new key would make this
/// device unable to open the space keys sealed to the old one.
public protocol DeviceKeyStore: Sendable {
    /// The saved key pair, or `nil` when this device has none yet.
    func load() throws -> DeviceKeyPair?
    /// The saved key pair, created and saved on first use.
    func loadOrCreate() throws -> DeviceKeyPair
}
