import Testing

/// Polls `condition` every 50 ms until it holds; fails after `timeout` (a hang, not slowness: generous on purpose).
public func eventually(
    _ failure: @autoclosure () -> String, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record(Comment(rawValue: failure()), sourceLocation: sourceLocation)
    throw CancellationError()
}
