/// Thrown by ``withThrowingTimeout(_:_:)`` when the work does not finish in time.
struct TimeoutError: Error {}

/// Runs `work`, cancelling it and throwing ``TimeoutError`` if it takes longer than `timeout`.
func withThrowingTimeout<Result: Sendable>(
    _ timeout: Duration,
    _ work: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw TimeoutError() }
        return result
    }
}
