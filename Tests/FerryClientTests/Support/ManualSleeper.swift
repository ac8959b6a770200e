import FerryClient
import Synchronization

/// A ``SyncSleeper`` on a clock the test moves: sleepers wake when ``advance(by:)`` passes their deadline.
/// Tests wait for sleepers to register (``waitForSleepers(atLeast:)``) instead of sleeping.
final class ManualSleeper: SyncSleeper {
    private struct Sleeper {
        var id: Int
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var nextID = 0
        var sleepers: [Sleeper] = []
        /// Sleepers cancelled before they registered: they must not wait.
        var cancelledEarly: Set<Int> = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// How many sleepers wait now.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The pending deadlines, relative to now.
    var pendingDelays: [Duration] { state.withLock { state in state.sleepers.map { $0.deadline - state.now }.sorted() } }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    if state.cancelledEarly.remove(id) != nil { return nil }
                    state.sleepers.append(Sleeper(id: id, deadline: state.now + duration, continuation: continuation))
                    let count = state.sleepers.count
                    let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
                    state.watchers.removeAll { $0.count <= count }
                    return ready
                }
                guard let ready else { return continuation.resume(throwing: CancellationError()) }
                for watcher in ready { watcher.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` sleepers wait.
    func waitForSleepers(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isReady = state.withLock { state in
                if state.sleepers.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if isReady { continuation.resume() }
        }
    }
}
