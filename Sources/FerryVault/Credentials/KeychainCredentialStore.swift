#if canImport(Security)
import FerrySecurity
import Foundation

/// Keeps vault credentials in the Keychain as a generic password, on this device only (the notes-vault app's token in a keychain).
public struct KeychainCredentialStore: CredentialStore {
    /// The Keychain item holding the credentials' JSON.
    public var item: KeychainItem

    /// Creates a store for the item `service`/`account`, in `accessGroup` when given.
    public init(service: String, account: String = "ferry.vault.credentials", accessGroup: String? = nil) {
        item = KeychainItem(service: service, account: account, accessGroup: accessGroup)
    }

    /// Reads the credentials; empty when there is no item.
    public func load() throws -> VaultCredentials {
        guard let data = try Self.mapped(item.read()), !data.isEmpty else { return VaultCredentials() }
        return try JSONDecoder().decode(VaultCredentials.self, from: data)
    }

    /// Writes the credentials, creating the item when missing.
    public func save(_ credentials: VaultCredentials) throws {
        let data = try JSONEncoder().encode(credentials)
        try Self.mapped(item.write(data))
    }

    /// Deletes the item; succeeds when there is none.
    public func delete() throws {
        try Self.mapped(item.delete())
    }

    private static func mapped<T>(_ body: @autoclosure () throws(KeychainFailure) -> T) throws(VaultError) -> T {
        do {
            return try body()
        } catch {
            throw VaultError(.permissionDenied, "Could not \(error.action) the vault credentials in the Keychain: \(error.reason).")
        }
    }
}
#endif
