#if canImport(Security)
import FerryCore
import FerrySecurity
import Foundation

/// Keeps the session in the Keychain as a generic password, readable after the first unlock, on this device only.
///
/// The item never leaves the device (see ``FerrySecurity/KeychainItem``), so a reinstall on a new device starts
/// signed out, as the seed app expects. On macOS the item lives in the data-protection keychain, which needs a
/// signed app with a keychain access group; command-line tools use ``FileSessionStore`` instead.
public struct KeychainSessionStore: SessionStore {
    /// The Keychain item holding the session's JSON.
    public var item: KeychainItem

    /// Creates a store for the item `service`/`account`, in `accessGroup` when given.
    public init(service: String, account: String = "ferry.session", accessGroup: String? = nil) {
        item = KeychainItem(service: service, account: account, accessGroup: accessGroup)
    }

    /// Reads the session from the Keychain item, or `nil` when there is no item.
    public func load() throws -> AuthSession? {
        guard let data = try Self.mapped(item.read()) else { return nil }
        guard let session = try? JSONDecoder().decode(AuthSession.self, from: data) else {
            throw AuthError(code: .sessionStoreFailed, message: "The Keychain item \(item.service)/\(item.account) is not a saved session.")
        }
        return session
    }

    /// Writes the session into the Keychain item, creating it when missing.
    public func save(_ session: AuthSession) throws {
        let data = try JSONEncoder().encode(session)
        try Self.mapped(item.write(data))
    }

    /// Deletes the Keychain item; succeeds when there is none.
    public func delete() throws {
        try Self.mapped(item.delete())
    }

    private static func mapped<T>(_ body: @autoclosure () throws(KeychainFailure) -> T) throws(AuthError) -> T {
        do {
            return try body()
        } catch {
            throw AuthError(code: .sessionStoreFailed, message: "Could not \(error.action) the session in the Keychain: \(error.reason).")
        }
    }
}
#endif
