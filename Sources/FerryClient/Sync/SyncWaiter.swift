import Synchronization

/// One caller of ``SyncEngine/sync()`` waiting for a report: resumed exactly once, by the sync's end, the engine's stop
/// or the caller's cancellation, whichever comes first.
final class SyncWaiter: Sendable {
    private enum State {
        case waiting(CheckedContinuation<SyncReport, any Error>?)
        case finished
    }

    private let state = Mutex(State.waiting(nil))

    /// Attaches the caller's continuation; `false` (and the continuation resumed with `CancellationError`) when the
    /// caller was cancelled before it got here.
    func attach(_ continuation: CheckedContinuation<SyncReport, any Error>) -> Bool {
        let attached = state.withLock { state in
            guard case .waiting = state else { return false }
            state = .waiting(continuation)
            return true
        }
        if !attached { continuation.resume(throwing: CancellationError()) }
        return attached
    }

    func resume(returning report: SyncReport) {
        take()?.resume(returning: report)
    }

    func resume(throwing error: any Error) {
        take()?.resume(throwing: error)
    }

    private func take() -> CheckedContinuation<SyncReport, any Error>? {
        state.withLock { state in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
    }
}
