#if canImport(Security)
import Foundation
import Security

/// One generic-password Keychain item that never leaves the device: the one place Ferry talks to the Keychain.
///
/// Items are readable after the first unlock, on this device only
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: no iCloud Keychain, no backup restored onto another
/// device). On macOS they live in the data-protection keychain, which needs a signed app with a keychain access
/// group; command-line tools keep their secrets in 0600 files instead. The session, device-key and vault
/// credential stores wrap this type and turn ``KeychainFailure`` into their own errors.
public struct KeychainItem: Sendable, Hashable {
    /// The item's service, e.g. the app's bundle identifier.
    public var service: String
    /// The item's account.
    public var account: String
    /// The Keychain access group shared with app extensions, or `nil` for the app's default group.
    public var accessGroup: String?

    /// Names the item `service`/`account`, in `accessGroup` when given.
    public init(service: String, account: String, accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// The item's bytes, or `nil` when there is no item.
    public func read() throws(KeychainFailure) -> Data? {
        var query = identity
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess: return (result as? Data) ?? Data()
        case errSecItemNotFound: return nil
        default: throw KeychainFailure(status: status, action: "read")
        }
    }

    /// Replaces the item's bytes, creating the item when it is missing.
    public func write(_ data: Data) throws(KeychainFailure) {
        let attributes = protectedValue(data)
        var status = SecItemUpdate(identity as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(identity.merging(attributes) { _, new in new } as CFDictionary, nil)
            if status == errSecDuplicateItem {
                // Another process added the item between our update and our add: update it after all.
                status = SecItemUpdate(identity as CFDictionary, attributes as CFDictionary)
            }
        }
        guard status == errSecSuccess else { throw KeychainFailure(status: status, action: "save") }
    }

    /// Creates the item with `data`; `false`, changing nothing, when the item already exists.
    public func add(_ data: Data) throws(KeychainFailure) -> Bool {
        let status = SecItemAdd(identity.merging(protectedValue(data)) { _, new in new } as CFDictionary, nil)
        switch status {
        case errSecSuccess: return true
        case errSecDuplicateItem: return false
        default: throw KeychainFailure(status: status, action: "create")
        }
    }

    /// Deletes the item; succeeds when there is none.
    public func delete() throws(KeychainFailure) {
        let status = SecItemDelete(identity as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainFailure(status: status, action: "delete") }
    }

    /// The attributes that identify the item.
    private var identity: [String: Any] {
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

    private func protectedValue(_ data: Data) -> [String: Any] {
        [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
    }
}

/// A Keychain call that failed, with the system's reason.
public struct KeychainFailure: Error, Sendable, Hashable {
    /// The `OSStatus` the Keychain answered.
    public var status: Int32
    /// What was attempted: `read`, `save`, `create` or `delete`.
    public var action: String

    /// The system's description of ``status``.
    public var reason: String { (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)" }
}
#endif
