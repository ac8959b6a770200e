import FerryCore

/// Keeps the signed-in session across launches: a 0600 file (``FileSessionStore``), the Keychain
/// (`KeychainSessionStore`, Apple platforms), or memory (``InMemorySessionStore``).
///
/// The methods are synchronous on purpose: ``AuthClient`` calls them from its actor, so reads and writes
/// happen in the order the session changes and never interleave.
public protocol SessionStore: Sendable {
    /// The saved session, or `nil` when none is saved.
    func load() throws -> AuthSession?
    /// Saves `session`, replacing any saved one.
    func save(_ session: AuthSession) throws
    /// Removes the saved session; succeeds when none is saved.
    func delete() throws
}
