import Synchronization

/// One timer for every pending ``withTimeout(_:throwing:_:)``: a sleeping task per call cost a task, a system timer
/// and two thread hand-offs, about a tenth of a no-op pull (docs/benchmarks.md).
///
/// One task sleeps until the earliest deadline. Most deadlines are far (a request's 30 seconds) and most calls end
/// long before theirs, so a call that ends only removes its entry; the sleeper, woken for an entry that is gone,
/// looks again and sleeps until the earliest left. A deadline earlier than the one slept to starts a new sleeper.
/// A deadline that moved later (``withDeadline(_:throwing:_:)``) is looked at again when it would have passed.
package final class TimeoutTimer: Sendable {
    package static let shared = TimeoutTimer()

    private struct Entry {
        let deadline: @Sendable () -> ContinuousClock.Instant
        let fire: @Sendable () -> Void
        var due: ContinuousClock.Instant
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var nextID = 0
        /// When the current sleeper wakes, and which it is (a replaced sleeper that wakes does nothing).
        var wake: ContinuousClock.Instant?
        var sleeper = 0
    }

    private let state = Mutex(State())

    /// Calls `fire` once `deadline()` has passed (looked at again when it comes), unless ``cancel(_:)`` comes first.
    package func schedule(deadline: @escaping @Sendable () -> ContinuousClock.Instant, fire: @escaping @Sendable () -> Void) -> Int {
        let due = deadline()
        let (id, sleeper) = state.withLock { state -> (Int, Int?) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, fire: fire, due: due)
            if let wake = state.wake, wake <= due { return (state.nextID, nil) }
            state.wake = due
            state.sleeper += 1
            return (state.nextID, state.sleeper)
        }
        if let sleeper { sleep(until: due, sleeper: sleeper) }
        return id
    }

    /// Forgets a scheduled call that ended first.
    package func cancel(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    private func sleep(until due: ContinuousClock.Instant, sleeper: Int) {
        Task {
            try? await Task.sleep(until: due, clock: .continuous)
            self.wake(sleeper)
        }
    }

    /// Fires what is due, and sleeps again until the earliest deadline left.
    private func wake(_ sleeper: Int) {
        let now = ContinuousClock.now
        let (due, next) = state.withLock { state -> ([Entry], (ContinuousClock.Instant, Int)?) in
            guard state.sleeper == sleeper else { return ([], nil) }
            var fired: [Entry] = []
            var earliest: ContinuousClock.Instant?
            for (id, var entry) in state.entries where entry.due <= now {
                entry.due = entry.deadline()
                if entry.due <= now {
                    fired.append(entry)
                    state.entries.removeValue(forKey: id)
                } else {
                    state.entries[id] = entry
                }
            }
            for entry in state.entries.values where earliest.map({ entry.due < $0 }) ?? true { earliest = entry.due }
            state.wake = earliest
            guard let earliest else { return (fired, nil) }
            state.sleeper += 1
            return (fired, (earliest, state.sleeper))
        }
        for entry in due { entry.fire() }
        if let (until, sleeper) = next { sleep(until: until, sleeper: sleeper) }
    }
}
