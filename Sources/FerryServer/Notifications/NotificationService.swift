import FerryCore
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import Synchronization

/// Wakes devices with a background notification after a commit in one of their spaces, when they have no open stream.
///
/// Commits and stream changes are noted in memory (``committed(space:seq:origin:)`` never waits on anything); a loop
/// writes them to the database's notification queue, claims what is due and sends it through APNs. The queue keeps one
/// notification per device, so a burst of commits wakes a device once, and a device is woken at most once per
/// ``NotificationConfiguration/minimumInterval``. Claims are leased, so several instances send each notification once;
/// a failing APNs leaves notifications queued with growing pauses, and commits never notice.
final class NotificationService: Service, Sendable {
    /// How long a stream mark holds without being renewed: an instance that dies stops renewing its streams' marks.
    static let streamMarkLifetime: TimeInterval = 90
    static let streamMarkRenewal: TimeInterval = 30
    /// How long a claim holds: longer than a send may take (its timeout is 30 s).
    static let claimLease: TimeInterval = 60
    static let claimBatch = 64
    static let claimInterval: TimeInterval = 0.5

    let storage: any NotificationStorage
    /// The caller's spaces, for an alert to a space: membership, role and encryption.
    let spaces: any SpaceStorage
    let apns: APNsClient
    /// Alerts per account and minute.
    let alertLimiter: RateLimiter
    let configuration: NotificationConfiguration
    let metrics: NotificationMetrics
    let logger: Logger
    private let state = Mutex(State())

    private struct CommitKey: Hashable {
        var space: UUID
        var origin: UUID?
    }

    private struct State {
        var commits: [CommitKey: Int64] = [:]
        /// Open streams per device on this instance.
        var streams: [UUID: Int] = [:]
        var opened: Set<UUID> = []
        var closed: Set<UUID> = []
        var lastRenewal = Date.distantPast
        var lastClaim = Date.distantPast
        var moreToClaim = false
        var wake: AsyncStream<Void>.Continuation?
    }

    init(
        storage: any NotificationStorage & SpaceStorage, configuration: NotificationConfiguration, registry: PrometheusCollectorRegistry, logger: Logger
    ) throws {
        self.storage = storage
        spaces = storage
        alertLimiter = RateLimiter(limit: configuration.alertsPerMinute, window: .seconds(60))
        self.configuration = configuration
        apns = try APNsClient(configuration: configuration)
        metrics = NotificationMetrics(registry: registry)
        self.logger = logger
    }

    /// Notes a commit of `origin` (the pushing device; `nil` for a table request) in `space` up to `seq`.
    func committed(space: UUID, seq: Int64, origin: UUID?) {
        let wake = state.withLock { state in
            let key = CommitKey(space: space, origin: origin)
            state.commits[key] = max(state.commits[key] ?? 0, seq)
            return state.wake
        }
        wake?.yield()
    }

    /// Notes that a stream of `deviceID` opened on this instance: the device is awake.
    func streamOpened(deviceID: UUID) {
        let wake = state.withLock { state in
            state.streams[deviceID, default: 0] += 1
            if state.streams[deviceID] == 1 {
                state.opened.insert(deviceID)
                state.closed.remove(deviceID)
            }
            return state.wake
        }
        wake?.yield()
    }

    /// Notes that a stream of `deviceID` closed on this instance.
    func streamClosed(deviceID: UUID) {
        let wake = state.withLock { state in
            guard let count = state.streams[deviceID] else { return nil as AsyncStream<Void>.Continuation? }
            if count > 1 {
                state.streams[deviceID] = count - 1
            } else {
                state.streams[deviceID] = nil
                state.closed.insert(deviceID)
                state.opened.remove(deviceID)
            }
            return state.wake
        }
        wake?.yield()
    }

    func run() async throws {
        let (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.wake = continuation }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield()
            }
        }
        // Sends in flight are cancelled at shutdown rather than awaited: their notifications stay queued, leased, and
        // are sent after the lease by whichever instance runs then.
        let loop = Task {
            for await _ in wakes {
                if await cycle() == Self.claimBatch { continuation.yield() }
            }
        }
        // A graceful shutdown, or the cancellation of the service group's task, ends the loop.
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await loop.value
            } onGracefulShutdown: {
                continuation.finish()
                loop.cancel()
            }
        } onCancel: {
            continuation.finish()
            loop.cancel()
        }
        ticker.cancel()
        state.withLock { $0.wake = nil }
        await apns.shutdown()
    }

    /// Writes what was noted, then sends what is due; returns how many notifications it claimed.
    private func cycle() async -> Int {
        let now = Date()
        let (commits, opened, closed, renew) = state.withLock { state in
            defer {
                state.commits = [:]
                state.opened = []
                state.closed = []
            }
            let renew = now.timeIntervalSince(state.lastRenewal) >= Self.streamMarkRenewal
            if renew { state.lastRenewal = now }
            return (state.commits, renew ? Array(state.streams.keys) : Array(state.opened), Array(state.closed), renew)
        }
        var queued: Set<CommitKey> = []
        do {
            // Marks first: a stream that opened before a commit was noted keeps its device from being woken by it.
            try await storage.markStreaming(deviceIDs: opened, until: now.addingTimeInterval(Self.streamMarkLifetime))
            try await storage.markStreaming(deviceIDs: closed, until: nil)
            for (key, seq) in commits {
                try await storage.queueNotifications(
                    space: key.space, seq: seq, origin: key.origin, dueAt: now.addingTimeInterval(configuration.coalescingDelay.timeInterval), now: now
                )
                queued.insert(key)
            }
        } catch {
            // Kept for the next cycle (the database may be back by then), so no commit goes unannounced.
            renote(commits: commits.filter { !queued.contains($0.key) }, opened: renew ? [] : opened, closed: closed)
            if Task.isCancelled { return 0 }
            logger.warning("notifications not queued", metadata: ["ferry.error": "\(error)", "ferry.renewal": "\(renew)"])
        }
        // Commits wake the loop too, but what they queue is due only after the coalescing delay: claim at most twice a
        // second (unless the last claim was a full batch), so a busy space costs one query per commit, not two.
        let claimsNow = state.withLock { state in
            guard state.moreToClaim || now.timeIntervalSince(state.lastClaim) >= Self.claimInterval else { return false }
            state.lastClaim = now
            return true
        }
        guard claimsNow else { return 0 }
        let claimed: [QueuedNotification]
        do {
            claimed = try await storage.claimNotifications(now: now, leaseUntil: now.addingTimeInterval(Self.claimLease), limit: Self.claimBatch)
        } catch {
            if !Task.isCancelled { logger.warning("notifications not claimed", metadata: ["ferry.error": "\(error)"]) }
            return 0
        }
        // Sent at once; their outcomes stored together, in one transaction.
        let outcomes = await withTaskGroup(of: (QueuedNotification, NotificationOutcome).self) { group in
            for notification in claimed {
                group.addTask { (notification, await self.send(notification)) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        do {
            // In device order, as queueing locks them: two instances never wait on each other's rows in a cycle.
            try await storage.finishNotifications(outcomes.sorted { $0.0.deviceID.uuidString < $1.0.deviceID.uuidString })
        } catch where !Task.isCancelled {
            // The leases run out and the notifications are claimed again: at worst sent twice, never lost.
            logger.warning("notification outcomes not stored", metadata: ["ferry.error": "\(error)"])
        } catch {}
        state.withLock { $0.moreToClaim = claimed.count == Self.claimBatch }
        return claimed.count
    }

    /// Puts back what a failed cycle did not write, unless newer notes replaced it meanwhile.
    private func renote(commits: [CommitKey: Int64], opened: [UUID], closed: [UUID]) {
        state.withLock { state in
            for (key, seq) in commits { state.commits[key] = max(state.commits[key] ?? 0, seq) }
            for device in opened where state.streams[device] != nil && !state.closed.contains(device) { state.opened.insert(device) }
            for device in closed where state.streams[device] == nil && !state.opened.contains(device) { state.closed.insert(device) }
            if opened.count + closed.count > 0 { state.lastRenewal = .distantPast }
        }
    }

    private func send(_ notification: QueuedNotification) async -> NotificationOutcome {
        guard let token = notification.deviceToken else { return .dropped }
        let delivery = await apns.send(Self.backgroundNotification(notification), to: token, environment: notification.environment)
        return outcome(of: delivery, for: notification, kind: "background")
    }

    /// Maps APNs' answer to the queue's outcome, counting and logging it (never the token).
    func outcome(of delivery: APNsDelivery, for notification: QueuedNotification, kind: String) -> NotificationOutcome {
        let device = notification.deviceID.lowercasedText
        switch delivery {
        case .delivered:
            metrics.sent(kind).increment()
            return .sent(nextAllowed: Date().addingTimeInterval(configuration.minimumInterval.timeInterval))
        case .tokenRejected(let reason):
            metrics.tokensCleared.increment()
            logger.info("push token cleared", metadata: ["ferry.device": "\(device)", "ferry.reason": "\(reason)"])
            return .tokenRejected
        case .retryLater(let reason):
            metrics.failed(kind).increment()
            let pause = min(600, 2 * pow(2, Double(min(notification.attempts, 10))))
            // Alerts are not queued: only a background notification is tried again.
            let retry = kind == "alert" ? "never" : "\(Int(pause))s"
            logger.info("notification not sent", metadata: ["ferry.device": "\(device)", "ferry.reason": "\(reason)", "ferry.retry_in": "\(retry)"])
            return .retry(at: Date().addingTimeInterval(pause))
        case .refused(let reason):
            metrics.failed(kind).increment()
            logger.warning("notification refused by APNs", metadata: ["ferry.device": "\(device)", "ferry.reason": "\(reason)"])
            return .dropped
        }
    }

    /// `{"aps":{"content-available":1},"ferry":{"space":…,"seq":…}}`, sent with priority 5 as Apple requires.
    static func backgroundNotification(_ notification: QueuedNotification) -> APNsNotification {
        let payload = #"{"aps":{"content-available":1},"ferry":{"space":"\#(notification.space.lowercasedText)","seq":\#(notification.seq)}}"#
        return APNsNotification(
            pushType: "background", priority: 5, payload: Data(payload.utf8), collapseID: nil, expiration: Date().addingTimeInterval(3600)
        )
    }
}

/// The notifications' series in `/metrics`.
struct NotificationMetrics: Sendable {
    private let sentBackground: Counter
    private let sentAlert: Counter
    private let failedBackground: Counter
    private let failedAlert: Counter
    /// `ferry_notification_tokens_cleared_total`: device tokens APNs rejected, cleared.
    let tokensCleared: Counter

    init(registry: PrometheusCollectorRegistry) {
        let sent = MetricNameDescriptor("ferry_notifications_sent_total", help: "Notifications APNs accepted.")
        let failed = MetricNameDescriptor("ferry_notifications_failed_total", help: "Notification sends that failed.")
        sentBackground = registry.makeCounter(descriptor: sent, labels: [("kind", "background")])
        sentAlert = registry.makeCounter(descriptor: sent, labels: [("kind", "alert")])
        failedBackground = registry.makeCounter(descriptor: failed, labels: [("kind", "background")])
        failedAlert = registry.makeCounter(descriptor: failed, labels: [("kind", "alert")])
        tokensCleared = registry.makeCounter(
            descriptor: MetricNameDescriptor("ferry_notification_tokens_cleared_total", help: "Device tokens APNs rejected, cleared.")
        )
    }

    func sent(_ kind: String) -> Counter { kind == "alert" ? sentAlert : sentBackground }
    func failed(_ kind: String) -> Counter { kind == "alert" ? failedAlert : failedBackground }
}
