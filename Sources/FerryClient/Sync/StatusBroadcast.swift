import Synchronization

/// Fans ``SyncStatus`` snapshots out to any number of `AsyncStream`s, each starting with the current one.
///
/// A lock (not an actor) so ``SyncEngine/statusUpdates()`` can subscribe synchronously.
final class StatusBroadcast: Sendable {
    private struct Subscribers {
        var current = SyncStatus()
        var nextID = 0
        var continuations: [Int: AsyncStream<SyncStatus>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    /// The last published status.
    var current: SyncStatus { subscribers.withLock { $0.current } }

    /// A new stream that yields the current status, then every change.
    func subscribe() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(64))
        let id = subscribers.withLock { subscribers in
            let id = subscribers.nextID
            subscribers.nextID += 1
            subscribers.continuations[id] = continuation
            continuation.yield(subscribers.current)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Changes the status with `change` and publishes it when it differs.
    func update(_ change: (inout SyncStatus) -> Void) {
        subscribers.withLock { subscribers in
            var status = subscribers.current
            change(&status)
            guard status != subscribers.current else { return }
            subscribers.current = status
            for continuation in subscribers.continuations.values { continuation.yield(status) }
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
