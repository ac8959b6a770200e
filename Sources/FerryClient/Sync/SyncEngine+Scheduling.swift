import FerryCore
import Foundation
import GRDB
import Logging

/// The engine's scheduler: coalescing, follow-ups, timers and backoff.
extension SyncEngine {
    /// Runs `operation` as a child task of ``run()`` (queued until it runs).
    func spawn(_ operation: @escaping @Sendable () async -> Void) {
        let work = Work(operation: operation)
        if let workSink {
            workSink.yield(work)
        } else {
            pendingWork.append(work)
        }
    }

    /// Records `trigger` against the sync about to begin, or the next one, and starts or schedules it.
    func request(_ trigger: SyncTrigger, immediately: Bool) {
        if current?.hasBegun == false {
            current?.triggers.append(trigger)
            return
        }
        if next == nil { next = PassSlot() }
        next?.triggers.append(trigger)
        guard current == nil else { return }  // the follow-up starts when the sync in flight ends
        if isConnected == false && trigger != .manual {
            publishIdlePhase()  // kept until the network comes back
            return
        }
        if let timer {
            if timer.isBackoff {
                guard trigger == .manual || trigger == .connectivityRestored else { return }  // the retry carries it
            } else if !immediately {
                return  // the coalescing window already runs
            }
        }
        if immediately {
            startPass()
        } else {
            armTimer(after: configuration.coalescingWindow, isBackoff: false)
        }
    }

    /// Starts the timer that starts `next`, replacing any other.
    func armTimer(after delay: Duration, isBackoff: Bool) {
        timerToken += 1
        let token = timerToken
        timer = (token, isBackoff)
        spawn {
            do { try await self.sleeper.sleep(for: delay) } catch { return }
            await self.timerFired(token)
        }
    }

    func timerFired(_ token: Int) {
        guard let timer, timer.token == token else { return }
        self.timer = nil
        guard current == nil, let slot = next else { return }
        if isConnected == false && !slot.triggers.contains(.manual) {
            publishIdlePhase()
            return
        }
        startPass()
    }

    func debounceElapsed() {
        isDebouncing = false
        // A sync that ran meanwhile may have pushed everything already; then there is nothing to do.
        if (try? store.hasPendingMutations()) == false { return }
        request(.localChange, immediately: true)
    }

    /// Starts `next` as the sync in flight.
    func startPass() {
        guard current == nil, !isSuspended, let slot = next else { return }
        next = nil
        timer = nil
        current = slot
        startedSyncCount += 1
        let configured = makePass()
        broadcast.update { status in
            status.phase = .pushing
            status.progress = SyncProgress()
        }
        spawn {
            // Its own task, so that ``suspend()`` can stop this sync alone (``stopPassInFlight()``).
            let pass = Task { try await configured.run { phase, progress in await self.progressed(phase, progress) } }
            await self.passBegins(pass)
            let result = await withTaskCancellationHandler { await pass.result } onCancel: { pass.cancel() }
            await self.passEnded(result)
        }
    }

    /// One sync as this engine runs it.
    func makePass() -> SyncPass {
        var pass = SyncPass(
            store: store, remote: remote, pushBatchSize: configuration.pushBatchSize, pullLimit: configuration.pullLimit,
            encryption: encryption, logger: logger
        )
        pass.blobDownloads = configuration.blobDownloads
        pass.blobChunks = configuration.blobChunks
        pass.blobCacheLimit = configuration.blobCacheLimit
        pass.isNetworkExpensive = isNetworkExpensive
        return pass
    }

    func passBegins(_ pass: Task<SyncReport, any Error>) {
        current?.hasBegun = true
        passTask = pass
        if isStoppingPass { pass.cancel() }
    }

    /// Stops the sync in flight between two of its transactions (``suspend()``); what it acknowledged is kept, its
    /// triggers and callers wait for the sync after ``resume()``.
    func stopPassInFlight() {
        guard current != nil else { return }
        isStoppingPass = true
        passTask?.cancel()
    }

    func progressed(_ phase: SyncStatus.Phase, _ progress: SyncProgress) {
        broadcast.update { status in
            status.phase = phase
            status.progress = progress
        }
    }

    func passEnded(_ result: Result<SyncReport, any Error>) {
        guard let finished = current else { return }
        current = nil
        passTask = nil
        // A sync stopped on purpose ends as cancelled whatever its transport made of it: no backoff, no error shown.
        var result = result
        let wasStopped = isStoppingPass
        if wasStopped, case .failure = result { result = .failure(CancellationError()) }
        isStoppingPass = false
        let pendingCount = (try? store.pendingCount()) ?? status.pendingCount
        switch result {
        case .success(var report):
            consecutiveFailures = 0
            var seen = Set<String>()
            report.triggers = finished.triggers.map(\.name).filter { seen.insert($0).inserted }
            lastReport = report
            broadcast.update { status in
                status.progress = nil
                status.lastSyncedAt = report.finishedAt
                status.lastError = nil
                status.pendingCount = pendingCount
            }
            publishIdlePhase()
            logger.info("synced", metadata: [
                "ferry.sync.triggers": "\(report.triggers.joined(separator: ","))", "ferry.sync.requests": "\(report.requests)",
                "ferry.sync.pushed": "\(report.pushed)", "ferry.sync.pulled": "\(report.pulled)", "ferry.sync.applied": "\(report.applied)",
            ])
            for waiter in finished.waiters { waiter.resume(returning: report) }
        case .failure(let error):
            if error is CancellationError {
                if wasStopped, isRunning {
                    // Stopped by suspend(): its callers and triggers wait, in front, for the sync after resume(), which
                    // may already have come while this one wound down (it starts nothing while a sync is current).
                    if next == nil { next = PassSlot() }
                    next?.waiters.insert(contentsOf: finished.waiters, at: 0)
                    requeue(finished.triggers)
                    broadcast.update { $0.progress = nil }
                    if !isSuspended, isConnected != false, timer?.isBackoff != true { startPass() }
                    publishIdlePhase()
                    return
                }
                for waiter in finished.waiters { waiter.resume(throwing: error) }
                requeue(finished.triggers)
                broadcast.update { $0.progress = nil }
                publishIdlePhase()
                return
            }
            let syncError = SyncError(error)
            for waiter in finished.waiters { waiter.resume(throwing: syncError) }
            broadcast.update { status in
                status.progress = nil
                status.lastError = syncError
                status.pendingCount = pendingCount
            }
            if syncError.isRetryable {
                consecutiveFailures += 1
                requeue(finished.triggers)
                let delay = max(configuration.backoff.delay(afterAttempt: consecutiveFailures, random: random()), syncError.retryAfter ?? .zero)
                logger.warning("sync failed; retrying later", metadata: [
                    "ferry.error.code": "\(syncError.code)", "ferry.sync.attempt": "\(consecutiveFailures)",
                    "ferry.sync.retry_ms": "\(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)",
                ])
                armTimer(after: delay, isBackoff: true)
                publishIdlePhase()
                return
            }
            logger.error("sync failed", metadata: ["ferry.error.code": "\(syncError.code)"])
            publishIdlePhase()
        }
        guard let slot = next else { return }
        if isConnected == false && !slot.triggers.contains(.manual) { return }
        startPass()
    }

    /// Puts the triggers of an unfinished sync back in front of `next`, so none is lost.
    private func requeue(_ triggers: [SyncTrigger]) {
        if next == nil { next = PassSlot() }
        next?.triggers.insert(contentsOf: triggers, at: 0)
    }

    /// Publishes the phase the engine is in between syncs.
    func publishIdlePhase() {
        guard current == nil else { return }
        let phase: SyncStatus.Phase = isConnected == false ? .offline : timer?.isBackoff == true ? .backingOff : .idle
        broadcast.update { $0.phase = phase }
    }

    func firePeriodically(every interval: Duration) async {
        while !Task.isCancelled {
            do { try await sleeper.sleep(for: interval) } catch { return }
            trigger(.periodic)
        }
    }

    /// Follows the outbox: turns each new entry into a debounced local-change trigger, and keeps
    /// ``SyncStatus/pendingCount`` current.
    ///
    /// Every commit that touches the outbox reads its highest id (one index lookup). The count scans the whole outbox,
    /// so it is read at once after a quiet spell and then at most every ``outboxCountInterval``, always once after
    /// the last change: a push of 100,000 entries commits 100 acknowledgements, and counting after each was a tenth of
    /// the push's CPU (docs/benchmarks.md).
    func watchOutbox() async {
        let observation = ValueObservation.tracking { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(mutation_id), 0) FROM ferry_outbox") ?? 0
        }
        do {
            for try await highest in observation.values(in: store.writer) {
                outboxChanged(highest: highest)
            }
        } catch {
            logger.warning("stopped following the outbox", metadata: ["ferry.error": "\(error)"])
        }
    }

    /// Reads the outbox's highest id every `interval`: writes committed by another process show there, not in the
    /// store's observation.
    func pollExternalWrites(every interval: Duration) async {
        while !Task.isCancelled {
            do { try await sleeper.sleep(for: interval) } catch { return }
            guard let highest = try? await store.read({ db in
                try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(mutation_id), 0) FROM ferry_outbox") ?? 0
            }) else { continue }
            outboxChanged(highest: highest)
        }
    }

    /// The shortest time between two counts of the outbox for ``SyncStatus/pendingCount``.
    static let outboxCountInterval = Duration.milliseconds(250)

    func outboxChanged(highest: Int64) {
        refreshPendingCount()
        defer { highestOutboxID = max(highestOutboxID ?? highest, highest) }
        if let highestOutboxID, highest > highestOutboxID {
            trigger(.localChange)
        }
    }

    /// Asks for a count of the outbox: at once after a quiet spell, otherwise once ``outboxCountInterval`` has passed
    /// since the last one. One count runs at a time, so the last one published is of the latest outbox.
    func refreshPendingCount() {
        guard !isPendingCountScheduled else { return }
        isPendingCountScheduled = true
        guard !isCountingPending else { return }  // the count under way counts again when it ends
        isCountingPending = true
        spawn { await self.countPendingWhileAsked() }
    }

    private func countPendingWhileAsked() async {
        defer { isCountingPending = false }
        while isPendingCountScheduled {
            if let last = lastPendingCount, ContinuousClock.now - last < Self.outboxCountInterval {
                // Real time, not the engine's sleeper: this paces work, it does not schedule syncs.
                try? await Task.sleep(for: Self.outboxCountInterval - (ContinuousClock.now - last))
            }
            isPendingCountScheduled = false
            lastPendingCount = .now
            if let count = try? await store.read(LocalStore.pendingCount) {
                broadcast.update { $0.pendingCount = count }
            }
        }
    }
}
