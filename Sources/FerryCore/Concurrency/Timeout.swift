/// Thrown by ``withTimeout(_:throwing:_:)`` when the work does not finish in time.
public struct TimeoutError: Error, Sendable, Hashable {
    /// Creates the error.
    public init() {}
}

/// Runs `operation`, cancelling it and throwing `timeoutError()` if it has not finished within `timeout`.
///
/// A race against a timer rather than a library's own timeout: URLSession on Linux rounds its timeouts to
/// whole seconds, and a database pool may wait for a connection far longer than a health check should.
public func withTimeout<Result: Sendable>(
    _ timeout: Duration,
    throwing timeoutError: @escaping @Sendable () -> any Error = { TimeoutError() },
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw timeoutError()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw timeoutError() }
        return first
    }
}
