#if canImport(Security)
import FerryCore
import Foundation
import Security

/// Keeps the session in the Keychain as a generic password, readable after the first unlock, on this device only.
///
/// The item never leaves the device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: no iCloud Keychain, no
/// backup restore onto another phone), so a reinstall on a new device starts signed out, as the seed app expects.
/// On macOS the item lives in the data-protection keychain, which needs a signed app with a keychain access group;
/// command-line tools use ``FileSessionStore`` instead.
public struct KeychainSessionStore: SessionStore {
    /// The item's service, e.g. the app's bundle identifier.
    public var service: String
    /// The item's account; one session per account.
    public var account: String
    /// The Keychain access group shared with app extensions, or `nil` for the app's default group.
    public var accessGroup: String?

    /// Creates a store for the item `service`/`account`, in `accessGroup` when given.
    public init(service: String, account: String = "ferry.session", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// Reads the session from the Keychain item, or `nil` when there is no item.
    public func load() throws -> AuthSession? {
        var query = baseQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data, let session = try? JSONDecoder().decode(AuthSession.self, from: data) else {
                throw AuthError(code: .sessionStoreFailed, message: "The Keychain item \(service)/\(account) is not a saved session.")
            }
            return session
        case errSecItemNotFound:
            return nil
        default:
            throw Self.error(status, "read")
        }
    }

    /// Writes the session into the Keychain item, creating it when missing.
    public func save(_ session: AuthSession) throws {
        let data = try JSONEncoder().encode(session)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(baseQuery as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            let item = baseQuery.merging(attributes) { _, new in new }
            status = SecItemAdd(item as CFDictionary, nil)
            if status == errSecDuplicateItem {
                // Another process added the item between our update and add: update it after all.
                status = SecItemUpdate(baseQuery as CFDictionary, attributes as CFDictionary)
            }
        }
        guard status == errSecSuccess else { throw Self.error(status, "save") }
    }

    /// Deletes the Keychain item; succeeds when there is none.
    public func delete() throws {
        let status = SecItemDelete(baseQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.error(status, "delete") }
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

    private static func error(_ status: OSStatus, _ action: String) -> AuthError {
        let reason = (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
        return AuthError(code: .sessionStoreFailed, message: "Could not \(action) the session in the Keychain: \(reason).")
    }
}
#endif
