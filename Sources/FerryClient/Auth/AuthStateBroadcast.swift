import Synchronization

/// Fans ``AuthState`` changes out to any number of `AsyncStream`s, each starting with the current state.
///
/// A lock (not an actor) so ``AuthClient/stateChanges()`` can subscribe synchronously from any context.
final class AuthStateBroadcast: Sendable {
    private struct Subscribers {
        var current: AuthState?
        var nextID = 0
        var continuations: [Int: AsyncStream<AuthState>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    /// The last published state, or `nil` before the first one.
    var current: AuthState? { subscribers.withLock { $0.current } }

    /// A new stream that yields the current state (once there is one), then every change.
    func subscribe() -> AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthState.self)
        let id = subscribers.withLock { subscribers in
            let id = subscribers.nextID
            subscribers.nextID += 1
            subscribers.continuations[id] = continuation
            if let current = subscribers.current { continuation.yield(current) }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `state` to every subscriber, unless it equals the current state.
    func publish(_ state: AuthState) {
        subscribers.withLock { subscribers in
            guard subscribers.current != state else { return }
            subscribers.current = state
            for continuation in subscribers.continuations.values { continuation.yield(state) }
        }
    }

    deinit {
        let continuations = subscribers.withLock { subscribers in
            defer { subscribers.continuations = [:] }
            return Array(subscribers.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
