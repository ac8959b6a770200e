import FerryCore
import Synchronization

/// Keeps the session in memory only: for previews, tests and processes that must not write to disk.
public final class InMemorySessionStore: SessionStore {
    private let stored: Mutex<AuthSession?>

    /// Creates a store holding `session`, or nothing.
    public init(_ session: AuthSession? = nil) {
        self.stored = Mutex(session)
    }

    /// The session held, if any.
    public func load() -> AuthSession? { stored.withLock { $0 } }

    /// Holds `session` instead of the previous one.
    public func save(_ session: AuthSession) { stored.withLock { $0 = session } }

    /// Drops the session held.
    public func delete() { stored.withLock { $0 = nil } }
}
