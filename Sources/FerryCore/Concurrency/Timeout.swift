import Synchronization

/// Thrown by ``withTimeout(_:throwing:_:)`` when the work does not finish in time.
public struct TimeoutError: Error, Sendable, Hashable {
    /// Creates the error.
    public init() {}
}

/// Runs `operation`, and throws `timeoutError()` as soon as `timeout` passes without a result, cancelling it.
///
/// A race against a timer rather than a library's own timeout: URLSession on Linux rounds its timeouts to
/// whole seconds, and a database pool may wait for a lost database indefinitely. The caller gets its answer
/// at the deadline even if the operation ignores cancellation (it then finishes, unobserved, in the background).
public func withTimeout<Result: Sendable>(
    _ timeout: Duration,
    throwing timeoutError: @escaping @Sendable () -> any Error = { TimeoutError() },
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let end = ContinuousClock.now + timeout
    return try await withDeadline({ end }, throwing: timeoutError, operation)
}

/// ``withTimeout(_:throwing:_:)`` against a deadline that may move later while the operation runs: the timer sleeps
/// until `deadline()` and, woken, sleeps again while the deadline has moved on.
public func withDeadline<Result: Sendable>(
    _ deadline: @escaping @Sendable () -> ContinuousClock.Instant,
    throwing timeoutError: @escaping @Sendable () -> any Error = { TimeoutError() },
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = TimeoutRace<Result>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation: continuation, deadline: deadline, timeoutError: timeoutError, operation: operation)
        }
    } onCancel: {
        race.cancel()
    }
}

/// The state of one ``withTimeout(_:throwing:_:)`` call: whichever of the work, the timer or a cancellation
/// comes first resumes the caller; the others are cancelled.
private final class TimeoutRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var work: Task<Void, Never>?
        var timer: Int?
        var isCancelled = false
    }

    private let state = Mutex(State())

    func start(
        continuation: CheckedContinuation<Result, any Error>, deadline: @escaping @Sendable () -> ContinuousClock.Instant,
        timeoutError: @escaping @Sendable () -> any Error, operation: @escaping @Sendable () async throws -> Result
    ) {
        let alreadyCancelled = state.withLock { state in
            state.continuation = continuation
            return state.isCancelled
        }
        if alreadyCancelled {
            finish(.failure(CancellationError()))
            return
        }
        let work = Task {
            do {
                self.finish(.success(try await operation()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let timer = TimeoutTimer.shared.schedule(deadline: deadline) { self.finish(.failure(timeoutError())) }
        let isFinished = state.withLock { state in
            state.work = work
            state.timer = timer
            return state.continuation == nil
        }
        if isFinished {
            work.cancel()
            TimeoutTimer.shared.cancel(timer)
        }
    }

    func cancel() {
        let hasStarted = state.withLock { state in
            state.isCancelled = true
            return state.continuation != nil
        }
        if hasStarted { finish(.failure(CancellationError())) }
    }

    private func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, work, timer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        guard let continuation else { return }
        work?.cancel()
        if let timer { TimeoutTimer.shared.cancel(timer) }
        continuation.resume(with: result)
    }
}
