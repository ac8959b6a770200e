#if canImport(Security)
import FerrySecurity
import Foundation

/// Keeps the device key pair in the Keychain as a generic password, readable after the first unlock, on this device only.
///
/// The item holds the private key's 32 raw bytes and never leaves the device (see ``FerrySecurity/KeychainItem``),
/// so a new device always makes its own key and must be trusted anew. On macOS the item lives in the
/// data-protection keychain, which needs a signed app with a keychain access group; command-line tools use
/// ``FileDeviceKeyStore`` instead.
public struct KeychainDeviceKeyStore: DeviceKeyStore {
    /// The Keychain item holding the private key.
    public var item: KeychainItem

    /// Creates a store for the item `service`/`account`, in `accessGroup` when given.
    public init(service: String, account: String = "ferry.device-key", accessGroup: String? = nil) {
        item = KeychainItem(service: service, account: account, accessGroup: accessGroup)
    }

    /// Reads the key pair from the Keychain item, or `nil` when there is no item.
    public func load() throws -> DeviceKeyPair? {
        guard let data = try Self.mapped(item.read()) else { return nil }
        guard let keyPair = try? DeviceKeyPair(privateKeyRawRepresentation: data) else {
            throw EncryptionError(
                code: .invalidPrivateKey,
                message: "The Keychain item \(item.service)/\(item.account) does not hold a device key and was left untouched; "
                    + "delete it to make this a new device that a trusted device must trust again."
            )
        }
        return keyPair
    }

    /// Reads the key pair from the Keychain item, or creates the item with a new key pair when there is none.
    public func loadOrCreate() throws -> DeviceKeyPair {
        if let existing = try load() { return existing }
        let keyPair = DeviceKeyPair.generate()
        if try Self.mapped(item.add(keyPair.privateKeyRawRepresentation)) { return keyPair }
        // Another process added the item between our read and our add: use its key.
        guard let existing = try load() else {
            throw EncryptionError(code: .keyStoreFailed, message: "The device key in the Keychain appeared and vanished while it was created; try again.")
        }
        return existing
    }

    private static func mapped<T>(_ body: @autoclosure () throws(KeychainFailure) -> T) throws(EncryptionError) -> T {
        do {
            return try body()
        } catch {
            throw EncryptionError(code: .keyStoreFailed, message: "Could not \(error.action) the device key in the Keychain: \(error.reason).")
        }
    }
}
#endif
