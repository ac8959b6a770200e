import Foundation
import Hummingbird
import Logging

/// Serves a stand-in's router on a free loopback port for the length of a test body: the one way the stand-ins for
/// outside services (GitHub's token endpoint, Apple's keys) run.
enum LoopbackRouter {
    /// Starts `router` on 127.0.0.1 with a port the system picks, runs `body` with that port, then stops the server
    /// however `body` ends.
    static func serve<Result>(_ router: Router<BasicRequestContext>, label: String, _ body: (Int) async throws -> Result) async throws -> Result {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: label)
        // Cancelling the server's task makes Hummingbird log "Server shutdown error: Already closed"; it is noise.
        logger.logLevel = .critical
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        let task = Task { try await application.runService(gracefulShutdownSignals: []) }
        defer { task.cancel() }
        var port = 0
        for await bound in ports {
            port = bound
            break
        }
        do {
            let result = try await body(port)
            task.cancel()
            _ = await task.result
            return result
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
    }
}
