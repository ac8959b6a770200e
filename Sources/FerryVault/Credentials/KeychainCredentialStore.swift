#if canImport(Security)
import Foundation
import Security

/// Keeps vault credentials in the Keychain as a generic password, on this device only (seed 002's token in a keychain).
public struct KeychainCredentialStore: CredentialStore {
    /// The item's service, e.g. the app's bundle identifier.
    public var service: String
    /// The item's account.
    public var account: String

    /// Creates a store for the item `service`/`account`.
    public init(service: String, account: String = "ferry.vault.credentials") {
        self.service = service
        self.account = account
    }

    /// Reads the credentials; empty when there is no item.
    public func load() throws -> VaultCredentials {
        var query = baseQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { return VaultCredentials() }
            return try JSONDecoder().decode(VaultCredentials.self, from: data)
        case errSecItemNotFound:
            return VaultCredentials()
        default:
            throw VaultError(.permissionDenied, "Could not read the vault credentials from the Keychain (OSStatus \(status)).")
        }
    }

    /// Writes the credentials, creating the item when missing.
    public func save(_ credentials: VaultCredentials) throws {
        let data = try JSONEncoder().encode(credentials)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(baseQuery as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(baseQuery.merging(attributes) { _, new in new } as CFDictionary, nil)
        }
        guard status == errSecSuccess else {
            throw VaultError(.permissionDenied, "Could not save the vault credentials in the Keychain (OSStatus \(status)).")
        }
    }

    /// Deletes the item; succeeds when there is none.
    public func delete() throws {
        let status = SecItemDelete(baseQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw VaultError(.permissionDenied, "Could not delete the vault credentials from the Keychain (OSStatus \(status)).")
        }
    }

    private var baseQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        #if os(macOS)
        query[kSecUseDataProtectionKeychain as String] = true
        #endif
        return query
    }
}
#endif
