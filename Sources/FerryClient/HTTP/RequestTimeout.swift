import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs `operation`, cancelling it and throwing `URLError(.timedOut)` if it has not finished within `timeout`.
///
/// URLSession on Linux rounds its timeouts to whole seconds (0.5 s fires at once), so the SDK races its
/// requests against a timer instead and leaves URLSession only a whole-second backstop
/// (`URLSessionConfiguration.makeEphemeral(backstopFor:)`).
func withRequestTimeout<Result: Sendable>(
    _ timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withTimeout(timeout, throwing: { URLError(.timedOut) }, operation)
}

extension URLSessionConfiguration {
    /// An ephemeral, cache-free configuration whose own timeouts fire a little after `timeout`, as a backstop
    /// behind ``withRequestTimeout(_:_:)``.
    static func makeEphemeral(backstopFor timeout: Duration) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = timeout.timeInterval
        configuration.timeoutIntervalForRequest = max(1, seconds.rounded(.up)) + 1
        configuration.timeoutIntervalForResource = max(1, seconds.rounded(.up)) + 1
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }
}
