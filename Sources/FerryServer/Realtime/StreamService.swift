import FerryCore
import Foundation
import JWTKit
import Logging
import Prometheus
import Synchronization

/// Opens streams: reads the caller's spaces and registers the stream with the hub, before the WebSocket upgrade, so a
/// refusal is an ordinary JSON error. ``StreamChannelHandler`` then serves the ``OpenStream`` on its connection.
///
/// Messages are ``StreamMessage``s: `ready` once, then `change` per space (carrying the commit's changes when they
/// are small, ``RealtimeLimits/carriedChangeBytes``) and `sync`.
///
/// Close codes: 4001 the access token expired (reconnect with a fresh one), 4003 the session ended or the device was
/// revoked (do not reconnect with this session), 1001 the server shuts down (reconnect, after a random delay).
struct StreamService: Sendable {
    let auth: AuthService
    let devices: DeviceService
    let storage: any SyncService.Storage
    let hub: RealtimeHub
    let metrics: StreamMetrics
    /// Told of the device's stream, so a device listening here is not woken by a notification too.
    var notifications: NotificationService?
    let logger: Logger

    /// How long a stream's session and spaces count as checked: past it, the next batch that carries changes checks
    /// them again first, so a stream never carries data on an account change whose event was lost (a notification
    /// that failed, an instance that died between its commit and its notification) for longer than this.
    static let recheckInterval: Duration = .seconds(30)
    /// How soon a stream whose check failed (the database briefly away) tries again, at its next batch; until then
    /// it sends plain pokes.
    static let recheckRetry: Duration = .seconds(5)

    /// Opens the stream of `caller`, whose request started when ``RealtimeHub/accountChangesHeard`` was
    /// `changesAtStart`. The stream counts as open until ``OpenStream/end()``.
    func open(_ caller: SyncCaller, changesAtStart: Int) async throws -> OpenStream {
        let spaces = Self.sequenceNumbers(try await storage.spaces(userID: caller.userID))
        let slot: RealtimeHub.Slot
        do {
            slot = try hub.open(userID: caller.userID, deviceID: caller.device?.id, spaces: spaces, changesAtStart: changesAtStart)
        } catch {
            throw error.serviceError(limits: hub.limits)
        }
        metrics.open.increment()
        if let device = caller.device?.id { notifications?.streamOpened(deviceID: device) }
        return OpenStream(caller: caller, slot: slot, service: self)
    }

    fileprivate static func sequenceNumbers(_ spaces: [SpaceSummary]) -> [UUID: Int64] {
        Dictionary(spaces.map { ($0.id, $0.seq) }, uniquingKeysWith: max)
    }
}

/// One stream the hub counts, from ``StreamService/open(_:changesAtStart:)`` until ``end()``.
final class OpenStream: Sendable {
    let caller: SyncCaller
    let slot: RealtimeHub.Slot
    let service: StreamService
    private let isEnded = Atomic(false)

    fileprivate init(caller: SyncCaller, slot: RealtimeHub.Slot, service: StreamService) {
        self.caller = caller
        self.slot = slot
        self.service = service
    }

    /// When the access token the stream was opened with expires.
    var expiresAt: Date { caller.account.claims.exp.value }

    /// Stops counting the stream and closes its mailbox; once only, whoever calls first (its close frame written, its
    /// connection closed, or an upgrade that never happened).
    func end() {
        guard !isEnded.exchange(true, ordering: .relaxed) else { return }
        service.hub.close(slot.id)
        service.metrics.open.decrement()
        if let device = caller.device?.id { service.notifications?.streamClosed(deviceID: device) }
    }

    /// What a session check found.
    enum Check: Sendable {
        /// The session holds: the account's spaces now.
        case current([UUID: Int64])
        /// The session ended, or is now bound to another device: close the stream with 4003.
        case sessionEnded
        /// The check could not be made (the database briefly away): send plain pokes and try again later.
        case failed
    }

    /// Checks the stream's session again and reloads its account's spaces into the hub.
    func recheck() async -> Check {
        let service = service
        do {
            let changes = service.hub.accountChanges(of: slot.id)
            let current = try await service.devices.caller(try await service.auth.recheck(caller.account))
            guard current.device?.id == caller.device?.id else { return .sessionEnded }
            let spaces = StreamService.sequenceNumbers(try await service.storage.spaces(userID: caller.userID))
            service.hub.update(slot.id, spaces: spaces, readAfter: changes)
            return .current(spaces)
        } catch let error as ServiceError where error.kind == .forbidden || error.kind == .unauthenticated {
            return .sessionEnded
        } catch {
            service.logger.debug("stream session not checked", metadata: ["ferry.error": "\(error)"])
            return .failed
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
        open = registry.makeGauge(
            descriptor: MetricNameDescriptor("ferry_realtime_streams", help: "Realtime streams open on this instance.")
        )
        messages = registry.makeCounter(
            descriptor: MetricNameDescriptor("ferry_realtime_messages_total", help: "Realtime pokes and sync requests sent to streams.")
        )
        carried = registry.makeCounter(
            descriptor: MetricNameDescriptor("ferry_realtime_carried_total", help: "Realtime pokes sent with their commit's changes.")
        )
    }
}
