import FerryCore
import Foundation
import HummingbirdWebSocket
import JWTKit
import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import Prometheus

/// One open stream: registers with the hub, sends `ready`, then forwards its mailbox as small JSON text messages
/// until the client leaves, the token expires, the session ends or the server shuts down.
///
/// Messages are ``StreamMessage``s: `ready` once, then `change` per space (carrying the commit's changes when they
/// are small, ``RealtimeLimits/carriedChangeBytes``) and `sync`.
///
/// Close codes: 4001 the access token expired (reconnect with a fresh one), 4003 the session ended or the device was
/// revoked (do not reconnect with this session), 1013 too many streams (retry later), 1001 the server shuts down
/// (reconnect, after a random delay).
struct StreamService: Sendable {
    static let tokenExpired = WebSocketErrorCode.unknown(4001)
    static let sessionEnded = WebSocketErrorCode.unknown(4003)
    static let tryAgainLater = WebSocketErrorCode.unknown(1013)

    let auth: AuthService
    let devices: DeviceService
    let storage: any SyncService.Storage
    let hub: RealtimeHub
    let metrics: StreamMetrics
    /// Told of the device's stream, so a device listening here is not woken by a notification too.
    var notifications: NotificationService?
    let logger: Logger

    private enum End { case clientLeft, tokenExpired, sessionEnded, closed }

    private static func sequenceNumbers(_ spaces: [SpaceSummary]) -> [UUID: Int64] {
        Dictionary(spaces.map { ($0.id, $0.seq) }, uniquingKeysWith: max)
    }

    /// Serves the stream of `caller`, whose request started when ``RealtimeHub/accountChangesHeard`` was
    /// `changesAtStart`.
    func serve(_ caller: SyncCaller, changesAtStart: Int, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let spaces = Self.sequenceNumbers(try await storage.spaces(userID: caller.userID))
        let slot: RealtimeHub.Slot
        do {
            slot = try hub.open(userID: caller.userID, deviceID: caller.device?.id, spaces: spaces, changesAtStart: changesAtStart)
        } catch .closing {
            try await outbound.close(.goingAway, reason: "server shutting down")
            return
        } catch {
            try await outbound.close(Self.tryAgainLater, reason: "too many streams")
            return
        }
        metrics.open.increment()
        if let device = caller.device?.id { notifications?.streamOpened(deviceID: device) }
        defer {
            hub.close(slot.id)
            metrics.open.decrement()
            if let device = caller.device?.id { notifications?.streamClosed(deviceID: device) }
        }
        let expiresAt = caller.account.claims.exp.value
        try await outbound.writeTextMessage(StreamMessage.ready(expiresAt: expiresAt).jsonText)
        // One task per stream besides the connection's own (which forwards the mailbox): each task keeps the memory
        // its deepest call grew for as long as it lives. The token's expiry is a timer on an event loop, not a task.
        let mailbox = slot.mailbox
        let expiry = NIOSingletons.posixEventLoopGroup.any().scheduleTask(in: .milliseconds(Int64(max(0, expiresAt.timeIntervalSinceNow) * 1000))) {
            mailbox.close(.tokenExpired)
        }
        defer { expiry.cancel() }
        let end = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Clients send nothing but control frames; data is read and dropped until they close.
                do { for try await _ in inbound {} } catch {}
                mailbox.close(.clientLeft)
            }
            let end = await forward(slot, of: caller, to: outbound)
            group.cancelAll()
            return end
        }
        switch end {
        case .tokenExpired: try? await outbound.close(Self.tokenExpired, reason: "access token expired")
        case .sessionEnded: try? await outbound.close(Self.sessionEnded, reason: "session ended")
        case .closed:
            // The server shuts down: "going away" tells clients to spread their reconnections (a deploy's storm).
            try? await outbound.close(.goingAway, reason: "server shutting down")
        case .clientLeft: break
        }
    }

    /// How long a stream's session and spaces count as checked: past it, the next batch that carries changes checks
    /// them again first, so a stream never carries data on an account change whose event was lost (a notification
    /// that failed, an instance that died between its commit and its notification) for longer than this.
    static let recheckInterval: Duration = .seconds(30)
    /// How soon a stream whose check failed (the database briefly away) tries again, at its next batch; until then
    /// it sends plain pokes.
    static let recheckRetry: Duration = .seconds(5)

    /// Writes each batch of the mailbox; checks the session and reloads the spaces first when the account changed,
    /// when the last check is older than ``recheckInterval`` and the batch carries changes, or when the stream is not
    /// current and its last try is older than ``recheckRetry``.
    private func forward(_ slot: RealtimeHub.Slot, of caller: SyncCaller, to outbound: WebSocketOutboundWriter) async -> End {
        // Each stream's interval is drawn between 1 and 1.5 times ``recheckInterval``: streams that opened together
        // (a restart's reconnections) do not all check on the same write.
        func nextCheck(after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
            now + Self.recheckInterval * Double.random(in: 1...1.5)
        }
        var checkDue = nextCheck(after: .now)
        var retryDue = ContinuousClock.now
        while var batch = await slot.mailbox.next() {
            let now = ContinuousClock.now
            let carries = batch.changes.values.contains { !$0.carried.isEmpty }
            if batch.recheck || (carries && now >= checkDue) || (!hub.isCurrent(slot.id) && now >= retryDue) {
                retryDue = now + Self.recheckRetry
                do {
                    guard let spaces = try await recheck(slot, of: caller) else { return .sessionEnded }
                    checkDue = nextCheck(after: now)
                    // Announcements queued for a space the account no longer has go unsent.
                    batch.changes = batch.changes.filter { spaces[$0.key] != nil }
                } catch let error as ServiceError where error.kind == .forbidden || error.kind == .unauthenticated {
                    return .sessionEnded
                } catch {
                    if Task.isCancelled { return .closed }
                    // The database briefly away: what was queued goes as plain pokes, which carry no data, and the
                    // check is tried again at the next batch after ``recheckRetry``.
                    for space in batch.changes.keys { batch.changes[space]?.carried = [] }
                    checkDue = retryDue
                    logger.debug("stream session not checked", metadata: ["ferry.error": "\(error)"])
                }
            }
            do {
                try await write(batch, to: outbound)
            } catch {
                // A write to a closing connection: the client pulls on its next poke or reconnect.
                if Task.isCancelled { return .closed }
                logger.debug("stream message not sent", metadata: ["ferry.error": "\(error)"])
            }
        }
        switch slot.mailbox.ending {
        case .clientLeft: return .clientLeft
        case .tokenExpired: return .tokenExpired
        case .closed, nil: return .closed
        }
    }

    /// Checks the stream's session again and reloads its account's spaces into the hub; `nil` when the session is now
    /// bound to another device.
    private func recheck(_ slot: RealtimeHub.Slot, of caller: SyncCaller) async throws -> [UUID: Int64]? {
        let changes = hub.accountChanges(of: slot.id)
        let current = try await devices.caller(try await auth.recheck(caller.account))
        guard current.device?.id == caller.device?.id else { return nil }
        let spaces = Self.sequenceNumbers(try await storage.spaces(userID: caller.userID))
        hub.update(slot.id, spaces: spaces, readAfter: changes)
        return spaces
    }

    private func write(_ batch: StreamMailbox.Batch, to outbound: WebSocketOutboundWriter) async throws {
        var sent = 0, carried = 0
        defer {
            metrics.messages.increment(by: Int64(sent))
            metrics.carried.increment(by: Int64(carried))
        }
        for (space, announcement) in batch.changes {
            guard !announcement.carried.isEmpty else {
                try await outbound.writeTextMessage(StreamMessage.change(space: space, seq: announcement.seq).jsonText)
                sent += 1
                continue
            }
            for message in announcement.carried {
                try await outbound.writeTextMessage(message.text)
                sent += 1
                carried += 1
            }
        }
        if batch.sync {
            try await outbound.writeTextMessage(StreamMessage.sync.jsonText)
            sent += 1
        }
    }
}

/// The stream's series in `/metrics`.
struct StreamMetrics: Sendable {
    /// `ferry_realtime_streams`: streams open on this instance.
    let open: Gauge
    /// `ferry_realtime_messages_total`: pokes and sync requests sent.
    let messages: Counter
    /// `ferry_realtime_carried_total`: pokes sent with their commit's changes.
    let carried: Counter

    init(registry: PrometheusCollectorRegistry) {
        open = registry.makeGauge(name: "ferry_realtime_streams", help: "Realtime streams open on this instance.")
        messages = registry.makeCounter(name: "ferry_realtime_messages_total", help: "Realtime pokes and sync requests sent to streams.")
        carried = registry.makeCounter(name: "ferry_realtime_carried_total", help: "Realtime pokes sent with their commit's changes.")
    }
}
