import Synchronization

/// Opens once `count` parties have arrived; everyone waiting then resumes. No sleeps, no polling.
final class Latch: Sendable {
    private struct State {
        var remaining: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(remaining: count))
    }

    func arrive() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.remaining -= 1
            guard state.remaining <= 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in ready { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if state.remaining <= 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}
