import FerryCore
import Foundation
import HummingbirdWebSocket
import JWTKit
import Logging
import NIOWebSocket
import Prometheus

/// One open stream: registers with the hub, sends `ready`, then forwards its mailbox as small JSON text messages
/// until the client leaves, the token expires, the session ends or the server shuts down.
///
/// Messages are ``StreamMessage``s: `ready` once, then `change` per space (carrying the commit's changes when they
/// are small, ``RealtimeLimits/carriedChangeBytes``) and `sync`.
///
/// Close codes: 4001 the access token expired (reconnect with a fresh one), 4003 the session ended or the device was
/// revoked (do not reconnect with this session), 1013 too many streams (retry later), 1000 the server shuts down.
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

    func serve(_ caller: SyncCaller, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let spaces = Self.sequenceNumbers(try await storage.spaces(userID: caller.userID))
        let slot: RealtimeHub.Slot
        do {
            slot = try hub.open(userID: caller.userID, deviceID: caller.device?.id, spaces: spaces)
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
        let end = await withTaskGroup(of: End.self) { group in
            group.addTask {
                // Clients send nothing but control frames; data is read and dropped until they close.
                do { for try await _ in inbound {} } catch {}
                return .clientLeft
            }
            group.addTask {
                let remaining = expiresAt.timeIntervalSinceNow
                if remaining > 0 { try? await Task.sleep(for: .milliseconds(Int64(remaining * 1000))) }
                return Task.isCancelled ? .closed : .tokenExpired
            }
            group.addTask { await forward(slot, of: caller, to: outbound) }
            let first = await group.next() ?? .closed
            group.cancelAll()
            return first
        }
        switch end {
        case .tokenExpired: try? await outbound.close(Self.tokenExpired, reason: "access token expired")
        case .sessionEnded: try? await outbound.close(Self.sessionEnded, reason: "session ended")
        case .clientLeft, .closed: break
        }
    }

    /// Writes each batch of the mailbox; checks the session first when the account changed.
    private func forward(_ slot: RealtimeHub.Slot, of caller: SyncCaller, to outbound: WebSocketOutboundWriter) async -> End {
        while let batch = await slot.mailbox.next() {
            do {
                if batch.recheck {
                    let changes = hub.accountChanges(of: slot.id)
                    let current = try await devices.caller(try await auth.recheck(caller.account))
                    guard current.device?.id == caller.device?.id else { return .sessionEnded }
                    let spaces = Self.sequenceNumbers(try await storage.spaces(userID: caller.userID))
                    hub.update(slot.id, spaces: spaces, readAfter: changes)
                }
                var sent = 0, carried = 0
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
                metrics.messages.increment(by: Int64(sent))
                metrics.carried.increment(by: Int64(carried))
            } catch let error as ServiceError where error.kind == .forbidden || error.kind == .unauthenticated {
                return .sessionEnded
            } catch {
                // A write to a closing connection, or the database briefly away during a check: the stream goes on,
                // and the client pulls on its next poke or reconnect.
                if Task.isCancelled { return .closed }
                logger.debug("stream message not sent", metadata: ["ferry.error": "\(error)"])
            }
        }
        return .closed
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
