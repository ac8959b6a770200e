import Synchronization

/// Fans a value's changes out to any number of `AsyncStream`s: the one broadcast type behind
/// ``SyncEngine/statusUpdates()``, ``AuthClient/stateChanges()`` and ``PostLoginSync/progressUpdates()``.
///
/// A lock, not an actor, so subscribing is synchronous from any context. A change equal to the current value is
/// not published.
final class Broadcast<Value: Sendable & Equatable>: Sendable {
    private struct Subscribers {
        var current: Value?
        var nextID = 0
        var continuations: [Int: AsyncStream<Value>.Continuation] = [:]
    }

    private let subscribers: Mutex<Subscribers>
    private let buffering: AsyncStream<Value>.Continuation.BufferingPolicy
    private let replaysCurrent: Bool

    /// - Parameters:
    ///   - initial: the current value before the first change, if any.
    ///   - buffering: what a slow subscriber's stream keeps.
    ///   - replaysCurrent: whether a new stream starts with the current value.
    init(_ initial: Value? = nil, buffering: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded, replaysCurrent: Bool = true) {
        subscribers = Mutex(Subscribers(current: initial))
        self.buffering = buffering
        self.replaysCurrent = replaysCurrent
    }

    /// The last published value, or `nil` before the first one.
    var current: Value? { subscribers.withLock { $0.current } }

    /// A new stream: the current value (when replayed and there is one), then every change; `buffering` overrides what
    /// this subscriber's stream keeps while it is slow.
    func subscribe(buffering: AsyncStream<Value>.Continuation.BufferingPolicy? = nil) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: buffering ?? self.buffering)
        let id = subscribers.withLock { subscribers in
            let id = subscribers.nextID
            subscribers.nextID += 1
            subscribers.continuations[id] = continuation
            if replaysCurrent, let current = subscribers.current { continuation.yield(current) }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `value` unless it equals the current one.
    func publish(_ value: Value) {
        subscribers.withLock { subscribers in
            guard subscribers.current != value else { return }
            subscribers.current = value
            for continuation in subscribers.continuations.values { continuation.yield(value) }
        }
    }

    /// Changes the current value with `change` and publishes the result when it differs; nothing before a first value.
    func update(_ change: (inout Value) -> Void) {
        subscribers.withLock { subscribers in
            guard var value = subscribers.current else { return }
            change(&value)
            guard value != subscribers.current else { return }
            subscribers.current = value
            for continuation in subscribers.continuations.values { continuation.yield(value) }
        }
    }

    /// Ends every open stream and forgets the current value; later subscribers start afresh.
    func finish() {
        let continuations = subscribers.withLock { subscribers in
            defer {
                subscribers.continuations = [:]
                subscribers.current = nil
            }
            return Array(subscribers.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    deinit {
        finish()
    }
}
