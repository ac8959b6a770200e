/// Where a profile keeps its vault credentials: a 0600 file on Linux, the Keychain on Apple platforms.
public protocol CredentialStore: Sendable {
    /// The stored credentials; empty when none are stored.
    func load() throws -> VaultCredentials
    /// Replaces the stored credentials.
    func save(_ credentials: VaultCredentials) throws
    /// Forgets the stored credentials.
    func delete() throws
}
