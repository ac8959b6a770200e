import FerryCore
import Foundation

/// What a background sync did: for `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` and a
/// `BGAppRefreshTask`, which must report in time.
public enum BackgroundSyncResult: Sendable, Hashable {
    /// The sync finished.
    case completed(SyncReport)
    /// The deadline came first: the sync was stopped between two of its transactions. What it acknowledged is kept;
    /// the rest (the outbox included) waits, intact, for the next sync.
    case stoppedAtDeadline
    /// The sync failed (offline, the server away, the session gone); the engine retries as it always does.
    case failed(SyncError)

    /// Whether it brought changes from other devices (`UIBackgroundFetchResult.newData`).
    public var hasNewData: Bool {
        if case .completed(let report) = self { return report.applied > 0 }
        return false
    }
}

extension SyncEngine {
    /// Runs one sync that ends by `deadline`, for an app woken in the background.
    ///
    /// When the engine is not running (an app launched in the background), it runs for this sync only. At the
    /// deadline the sync in flight is stopped between transactions: nothing half-applied, nothing lost, no mutation
    /// pushed twice (the server recognises a resent mutation id).
    public func backgroundSync(deadline: ContinuousClock.Instant) async -> BackgroundSyncResult {
        let startsEngine = !isRunning
        return await withTaskGroup(of: BackgroundSyncResult?.self) { group in
            if startsEngine {
                group.addTask {
                    try? await self.run()
                    return nil
                }
            }
            group.addTask {
                do {
                    return .completed(try await self.sync())
                } catch is CancellationError {
                    return .stoppedAtDeadline
                } catch {
                    return .failed(error as? SyncError ?? SyncError(error))
                }
            }
            group.addTask {
                do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return nil }
                return .stoppedAtDeadline
            }
            var result = BackgroundSyncResult.stoppedAtDeadline
            while let finished = await group.next() {
                if let finished {
                    result = finished
                    break
                }
            }
            // At the deadline, or when the caller gave up (an expiration handler cancelled it), the sync in flight stops.
            if result == .stoppedAtDeadline || Task.isCancelled { stopPassInFlight() }
            group.cancelAll()
            return result
        }
    }

    /// ``backgroundSync(deadline:)`` with a time limit from now.
    public func backgroundSync(timeLimit: Duration) async -> BackgroundSyncResult {
        await backgroundSync(deadline: .now + timeLimit)
    }

    /// Handles a notification the app received: a Ferry background notification (`"ferry": {"space", "seq"}`) runs a
    /// background sync unless this device already has that change; anything else returns `nil`, for the app's own
    /// handling. iOS allows about 30 seconds, hence the default time limit.
    public nonisolated func handleRemoteNotification(
        _ userInfo: [AnyHashable: Any], timeLimit: Duration = .seconds(25)
    ) async -> BackgroundSyncResult? {
        guard let hint = RemoteNotificationHint(userInfo) else { return nil }
        return await handle(hint, deadline: .now + timeLimit)
    }

    func handle(_ hint: RemoteNotificationHint, deadline: ContinuousClock.Instant) async -> BackgroundSyncResult {
        if let space = hint.space, let seq = hint.seq, let cursor = try? store.cursors()[space], cursor >= seq,
           (try? store.hasPendingMutations()) == false {
            return .completed(SyncReport())
        }
        return await backgroundSync(deadline: deadline)
    }
}

/// What a Ferry background notification says: the space and sequence number of the commit that woke the device.
struct RemoteNotificationHint: Sendable, Hashable {
    var space: UUID?
    var seq: Int64?

    /// Reads `userInfo["ferry"]`; `nil` when the notification is not Ferry's.
    init?(_ userInfo: [AnyHashable: Any]) {
        guard let ferry = userInfo["ferry"] as? [AnyHashable: Any] else { return nil }
        space = (ferry["space"] as? String).flatMap(UUID.init(uuidString:))
        seq = (ferry["seq"] as? NSNumber)?.int64Value ?? (ferry["seq"] as? Int).map(Int64.init)
    }

    init(space: UUID?, seq: Int64?) {
        self.space = space
        self.seq = seq
    }
}
