#if canImport(Security)
import FerrySecurity
import Foundation
import Security

/// Keeps the device key pair in the Keychain as a generic password, readable after the first unlock, on this device only.
///
/// The item holds the private key's 32 raw bytes and never leaves the device
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: no iCloud Keychain, no backup restore onto another
/// device), so a new device always makes its own key and must be trusted anew. On macOS the item lives in the
/// data-protection keychain, which needs a signed app with a keychain access group; command-line tools use
/// ``FileDeviceKeyStore`` instead.
public struct KeychainDeviceKeyStore: DeviceKeyStore {
    /// The item's service, e.g. the app's bundle identifier.
    public var service: String
    /// The item's account.
    public var account: String
    /// The Keychain access group shared with app extensions, or `nil` for the app's default group.
    public var accessGroup: String?

    /// Creates a store for the item `service`/`account`, in `accessGroup` when given.
    public init(service: String, account: String = "ferry.device-key", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// Reads the key pair from the Keychain item, or `nil` when there is no item.
    public func load() throws -> DeviceKeyPair? {
        var query = baseQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data, let keyPair = try? DeviceKeyPair(privateKeyRawRepresentation: data) else {
                throw EncryptionError(
                    code: .invalidPrivateKey,
                    message: "The Keychain item \(service)/\(account) does not hold a device key and was left untouched; "
                        + "delete it to make this a new device that a trusted device must trust again."
                )
            }
            return keyPair
        case errSecItemNotFound:
            return nil
        default:
            throw Self.error(status, "read")
        }
    }

    /// Reads the key pair from the Keychain item, or creates the item with a new key pair when there is none.
    public func loadOrCreate() throws -> DeviceKeyPair {
        if let existing = try load() { return existing }
        let keyPair = DeviceKeyPair.generate()
        var item = baseQuery
        item[kSecValueData as String] = keyPair.privateKeyRawRepresentation
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(item as CFDictionary, nil)
        switch status {
        case errSecSuccess:
            return keyPair
        case errSecDuplicateItem:
            // Another process added the item between our read and our add: use its key.
            guard let existing = try load() else { throw Self.error(status, "create") }
            return existing
        default:
            throw Self.error(status, "create")
        }
    }

    /// The attributes that identify the item.
    private var baseQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        #if os(macOS)
        // The iOS-style keychain on macOS too: honours kSecAttrAccessible and access groups, no ACL prompts.
        query[kSecUseDataProtectionKeychain as String] = true
        #endif
        return query
    }

    private static func error(_ status: OSStatus, _ action: String) -> EncryptionError {
        let reason = (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
        return EncryptionError(code: .keyStoreFailed, message: "Could not \(action) the device key in the Keychain: \(reason).")
    }
}
#endif
