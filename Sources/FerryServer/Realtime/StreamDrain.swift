import ServiceLifecycle

/// Closes every stream with 1001 (going away) when the server starts shutting down, before the HTTP server does.
///
/// It runs after the application in the server's `ServiceGroup`, which shuts services down in reverse order, each
/// once the one after it has returned. Without it the WebSocket layer would close the streams itself, with 1000, and
/// devices could not tell a deploy (reconnect after a random delay, so they do not all come back at once) from an
/// ordinary close.
struct StreamDrain: Service {
    let hub: RealtimeHub
    /// How long the streams' close frames may take to be written before the HTTP server's shutdown goes on.
    static let limit: Duration = .seconds(3)

    func run() async throws {
        // Returns at the graceful shutdown, or throws at cancellation: either way the streams end here (cancelled, they
        // are cut with their connections, and the wait below returns at once).
        try? await gracefulShutdown()
        hub.closeAll()
        await hub.waitUntilEmpty(within: Self.limit)
    }
}
