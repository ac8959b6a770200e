import FerryCore
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

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
    /// Lets a pull answered from memory first hear every event committed before it arrived.
    let fence: EventFence
    let logger: Logger
    /// The listening connection while there is one, for the fence's watchdog to close.
    private let listening = Mutex<PostgresConnection?>(nil)

    init(storage: PostgresStorage, hub: RealtimeHub, fence: EventFence, logger: Logger) {
        self.storage = storage
        self.hub = hub
        self.fence = fence
        self.logger = logger
    }

    func publish(_ events: [RealtimeEvent]) async {
        // This instance's own cache at once: its next request must not wait for the notification to come back.
        for event in events { hub.contexts?.apply(event) }
        // Other instances' memory of sessions depends on these lines, so a request whose deadline passes meanwhile
        // does not cancel them (a task of its own), and a failed one is tried again.
        let payloads = Self.payloads(events)
        await Task { [storage, logger] in
            for payload in payloads {
                for attempt in 1...3 {
                    do {
                        try await storage.client.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
                        break
                    } catch {
                        logger.error("realtime notification not sent", metadata: [
                            "ferry.error": "\(PostgresStorage.reason(error))", "ferry.realtime.attempt": "\(attempt)",
                        ])
                        try? await Task.sleep(for: .milliseconds(50 * attempt))
                    }
                }
            }
        }.value
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

    /// Listens until the server shuts down, reconnecting after failures, and sends the fences asked for meanwhile.
    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                group.addTask { await self.sendFences() }
                await self.listen()
                group.cancelAll()
            }
        }
    }

    /// How long a fence may take to come back, in all, before the listening connection counts as dead (one that dies
    /// without a reset, behind a NAT or a failover, is otherwise never noticed: it only reads).
    static let deadListenerTimeout = Duration.seconds(10)

    /// Sends each fence wanted, one at a time: those who ask while one is on its way share the next.
    ///
    /// A fence not heard back within ``EventFence/timeout`` sends its pulls, and every pull after them, to the database; one
    /// not heard within ``deadListenerTimeout`` has the listener connect again. Slow is not dead: on a loaded server
    /// a fence can take seconds, and a reconnection makes every stream check again and every device pull, which would
    /// load it more.
    private func sendFences() async {
        for await _ in fence.wanted {
            while let payload = fence.nextFence() {
                let number = fence.lastSent
                do {
                    try await storage.client.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
                } catch {
                    fence.sendFailed()
                    continue
                }
                // Not heard: slow, or no listener any more (which ``listen()`` handles).
                if await heard(number, within: EventFence.timeout) || listening.withLock({ $0 }) == nil { continue }
                fence.setSlow(true)
                logger.notice("realtime listener slow to hear its own notification; pulls read the database until it does")
                let late = await heard(number, within: Self.deadListenerTimeout - EventFence.timeout)
                fence.setSlow(false)
                if !late, !Task.isCancelled, let connection = listening.withLock({ $0 }) {
                    logger.warning("realtime listener did not hear its own notification in \(Self.deadListenerTimeout); reconnecting")
                    stopListening()
                    try? await connection.close()
                }
            }
        }
    }

    private func heard(_ fence: UInt64, within timeout: Duration) async -> Bool {
        (try? await withTimeout(timeout) { [self] in await self.fence.wait(for: fence) }) ?? false
    }

    /// Events may be missed from now on: nothing is answered from memory until the listener is back.
    private func stopListening() {
        hub.contexts?.setListening(false)
        fence.setListening(false)
    }

    private func listen() async {
        var failures = 0
        var hasListened = false
        while !Task.isCancelled {
            do {
                try await storage.withStandaloneConnection { connection in
                    self.listening.withLock { $0 = connection }
                    defer { self.listening.withLock { $0 = nil } }
                    try await connection.listen(on: Self.channel) { notifications in
                        failures = 0
                        // Whatever was notified while no connection listened is lost: every stream pulls once.
                        if hasListened { self.hub.deliver(.resync) }
                        hasListened = true
                        // From here every event is heard, so session contexts may be cached; until the connection
                        // drops (below), when they go again.
                        self.hub.contexts?.setListening(true)
                        self.fence.setListening(true)
                        for try await notification in notifications {
                            for line in notification.payload.split(separator: "\n") where !self.fence.heard(line) {
                                if let event = RealtimeEvent(notifyPayload: line) { self.hub.deliver(event) }
                            }
                        }
                    }
                }
            } catch where !Task.isCancelled && !(error is CancellationError) {
                failures += 1
                logger.warning("realtime listener lost its connection; reconnecting", metadata: [
                    "ferry.error": "\(PostgresStorage.reason(error))", "ferry.realtime.attempt": "\(failures)",
                ])
            } catch {}
            stopListening()
            if Task.isCancelled { return }
            try? await Task.sleep(for: .milliseconds(min(10_000, 250 << min(failures, 6))))
        }
    }
}
