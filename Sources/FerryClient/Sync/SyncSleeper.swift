/// Waits for a duration: the one seam between the ``SyncEngine``'s timers (debounce, coalescing, periodic,
/// backoff) and real time, so tests drive them with a manual clock instead of sleeping.
public protocol SyncSleeper: Sendable {
    /// Returns after `duration`, or throws `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws
}

/// Sleeps on `ContinuousClock`, the clock that keeps counting while the device sleeps.
public struct ContinuousSleeper: SyncSleeper {
    /// Creates a sleeper.
    public init() {}

    /// Sleeps for `duration`.
    public func sleep(for duration: Duration) async throws {
        try await ContinuousClock().sleep(for: duration)
    }
}
