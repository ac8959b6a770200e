import FerryCore
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Several instances on one PostgreSQL database: events cross instances through `NOTIFY ferry_realtime`, and each
/// instance `LISTEN`s on a connection of its own and delivers what it hears (its own events included) to its hub.
///
/// When the listening connection drops, the instance reconnects with backoff and then asks every open stream to
/// pull once, since notifications sent meanwhile are lost.
final class PostgresRealtimeFeed: RealtimeFeed, Service {
    static let channel = "ferry_realtime"
    /// PostgreSQL refuses payloads of 8,000 bytes or more.
    static let maximumPayloadBytes = 7_900

    let storage: PostgresStorage
    let hub: RealtimeHub
    let logger: Logger

    init(storage: PostgresStorage, hub: RealtimeHub, logger: Logger) {
        self.storage = storage
        self.hub = hub
        self.logger = logger
    }

    func publish(_ events: [RealtimeEvent]) async {
        for payload in Self.payloads(events) {
            do {
                try await storage.client.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
            } catch {
                logger.warning("realtime notification not sent", metadata: ["ferry.error": "\(PostgresStorage.reason(error))"])
            }
        }
    }

    /// The events as newline-separated lines, packed into as few payloads as fit.
    static func payloads(_ events: [RealtimeEvent]) -> [String] {
        var payloads: [String] = []
        var current = ""
        for line in events.map(\.notifyPayload) {
            if !current.isEmpty, current.utf8.count + 1 + line.utf8.count > maximumPayloadBytes {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? line : "\n" + line
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// Listens until the server shuts down, reconnecting after failures.
    func run() async throws {
        try await cancelWhenGracefulShutdown { [self] in
            var failures = 0
            var hasListened = false
            while !Task.isCancelled {
                do {
                    try await storage.withStandaloneConnection { connection in
                        try await connection.listen(on: Self.channel) { notifications in
                            failures = 0
                            // Whatever was notified while no connection listened is lost: every stream pulls once.
                            if hasListened { self.hub.deliver(.resync) }
                            hasListened = true
                            for try await notification in notifications {
                                for line in notification.payload.split(separator: "\n") {
                                    if let event = RealtimeEvent(notifyPayload: line) { self.hub.deliver(event) }
                                }
                            }
                        }
                    }
                } catch is CancellationError {
                    return
                } catch {
                    if Task.isCancelled { return }
                    failures += 1
                    logger.warning("realtime listener lost its connection; reconnecting", metadata: [
                        "ferry.error": "\(PostgresStorage.reason(error))", "ferry.realtime.attempt": "\(failures)",
                    ])
                }
                let delay = Duration.milliseconds(min(10_000, 250 << min(failures, 6)))
                try? await Task.sleep(for: delay)
            }
        }
    }
}
