import FerryCore
import Foundation

/// What a background sync did: for `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` and a
/// `BGAppRefreshTask`, which must report in time.
public enum BackgroundSyncResult: Sendable, Hashable {
    /// The sync finished.
    case completed(SyncReport)
    /// The deadline came first. A sync this call ran itself was stopped between two of its transactions: what it
    /// acknowledged is kept, the rest (the outbox included) waits, intact, for the next sync. A sync the running engine
    /// was doing goes on.
    case stoppedAtDeadline
    /// The sync failed (offline, the server away, the session gone); the engine retries as it always does.
    case failed(SyncError)

    /// Whether it brought changes from other devices (`UIBackgroundFetchResult.newData`).
    public var hasNewData: Bool {
        if case .completed(let report) = self { return report.applied > 0 }
        return false
    }
}

/// A Ferry background notification's hint: the space and sequence number of the commit that woke the device. A
/// `Sendable` value, so an app delegate hands it to the engine without sending its `userInfo` across actors.
public struct RemoteNotification: Sendable, Hashable {
    public var space: UUID?
    public var seq: Int64?

    /// Reads `userInfo["ferry"]`; `nil` when the notification is not a Ferry background notification (an alert carries
    /// `ferry` too, but no `seq`, and needs no sync).
    public init?(userInfo: [AnyHashable: Any]) {
        guard let ferry = userInfo["ferry"] as? [AnyHashable: Any], let seq = (ferry["seq"] as? NSNumber)?.int64Value ?? (ferry["seq"] as? Int).map(Int64.init)
        else { return nil }
        self.init(space: (ferry["space"] as? String).flatMap(UUID.init(uuidString:)), seq: seq)
    }

    public init(space: UUID?, seq: Int64?) {
        self.space = space
        self.seq = seq
    }
}

extension SyncEngine {
    /// Runs one sync that ends by `deadline`, for an app woken in the background.
    ///
    /// When the engine runs (``run()``), this joins its next sync and stops waiting at the deadline; the engine's sync
    /// goes on (iOS suspends the app, and the sync resumes or is redone later). When it does not (an app launched in the
    /// background), this runs one sync itself and stops it at the deadline between two transactions: nothing
    /// half-applied, nothing lost, no mutation pushed twice (the server recognises a resent mutation id).
    public func backgroundSync(deadline: ContinuousClock.Instant) async -> BackgroundSyncResult {
        // A suspended engine starts no sync: the woken app's sync is then this call's own.
        let joinsEngine = isRunning && !isSuspended
        let pass = makePass()
        return await withTaskGroup(of: BackgroundSyncResult?.self) { group in
            group.addTask {
                do {
                    return .completed(joinsEngine ? try await self.sync() : try await pass.run { _, _ in })
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
            // The other child: the sleep, or this call's wait or its own sync, which stops between transactions.
            group.cancelAll()
            return result
        }
    }

    /// ``backgroundSync(deadline:)`` with a time limit from now.
    public func backgroundSync(timeLimit: Duration) async -> BackgroundSyncResult {
        await backgroundSync(deadline: .now + timeLimit)
    }

    /// Handles a Ferry background notification: runs a background sync unless this device already has that change.
    /// iOS allows about 30 seconds, hence the default time limit.
    public func handleRemoteNotification(_ notification: RemoteNotification, timeLimit: Duration = .seconds(25)) async -> BackgroundSyncResult {
        if let space = notification.space, let seq = notification.seq, let cursor = try? store.cursors()[space], cursor >= seq,
           (try? store.hasPendingMutations()) == false {
            return .completed(SyncReport())
        }
        return await backgroundSync(timeLimit: timeLimit)
    }

    /// Stops syncing until ``resume()``: the sync in flight stops between two of its transactions (its callers wait
    /// for the sync after `resume()`), and no other starts. An app calls it as it goes to the background, so a store in
    /// an App Group container is not locked by a suspended app (iOS ends such an app).
    public func suspend() {
        isSuspended = true
        stopPassInFlight()
        publishIdlePhase()
    }

    /// Lets syncs start again after ``suspend()``, beginning with the one that waits.
    public func resume() {
        guard isSuspended else { return }
        isSuspended = false
        // The sync that waited starts now, unless the network is down or a backoff runs: then it starts when they end.
        if isRunning, next != nil, current == nil, isConnected != false, timer?.isBackoff != true { startPass() }
        publishIdlePhase()
    }
}
