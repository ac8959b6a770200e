import FerryCore
import Foundation

/// One sync: push the whole outbox in batches, then pull until the server has no more.
struct SyncPass: Sendable {
    let store: LocalStore
    let remote: any SyncRemote
    let pushBatchSize: Int
    let pullLimit: Int

    /// Runs the sync, reporting each phase and step to `progress`.
    func run(progress: @Sendable (SyncStatus.Phase, SyncProgress) async -> Void) async throws -> SyncReport {
        var report = SyncReport()
        report.startedAt = store.now()
        var current = SyncProgress(pushTotal: try store.pendingCount())

        // Spaces created offline exist on the server before the records written into them arrive.
        for request in try store.pendingSpaces() {
            guard let id = request.id else { continue }
            report.requests += 1
            do {
                _ = try await remote.createSpace(request)
            } catch let error as AuthError where error.code == .spaceExists {
                // Created by an earlier sync whose answer was lost.
            }
            try store.spaceCreated(id)
        }

        // Push: every entry that was in the outbox, oldest first. Acked entries leave in the ack's transaction;
        // unacked ones stay for the next sync, and `after` keeps this one from sending them twice.
        await progress(.pushing, current)
        var after: Int64 = 0
        var batchSize = pushBatchSize
        while true {
            try Task.checkCancellation()
            let batch = try store.pendingMutations(limit: batchSize, after: after)
            guard let last = batch.last else { break }
            let response: PushResponse
            do {
                report.requests += 1
                response = try await remote.push(PushRequest(deviceId: store.deviceId, mutations: batch))
            } catch let error as AuthError where error.status == 413 || error.code == .batchTooLarge {
                // Too big for the server: halve the batch; a single mutation too large on its own is refused
                // here, as the server would, so it cannot block the outbox.
                if batch.count > 1 {
                    batchSize = max(1, batch.count / 2)
                } else {
                    try store.rejectLocally(last, code: .recordTooLarge, message: "The change is larger than the server accepts (\(error.message)).")
                    report.pushed += 1
                    report.rejected += 1
                    after = last.mutationId
                }
                continue
            }
            let acknowledgement = try store.acknowledge(response, for: batch)
            if acknowledgement.acknowledged + acknowledgement.rejected == 0 {
                throw SyncError(code: .pushNotAcknowledged, message: "The server acknowledged none of \(batch.count) pushed changes; they stay in the outbox.", isRetryable: true)
            }
            report.pushed += batch.count
            report.rejected += acknowledgement.rejected
            after = last.mutationId
            current.pushed += batch.count
            current.pushTotal = max(current.pushTotal, current.pushed)
            await progress(.pushing, current)
        }

        // Pull: until the server has no more; a space the server resets is pulled again from 0 in the same sync.
        await progress(.pulling, current)
        var resetSpaces = Set<UUID>()
        var refreshedSchema = false
        while true {
            try Task.checkCancellation()
            let response = try await remote.pull(PullRequest(cursors: try store.cursors(), limit: pullLimit))
            report.requests += 1
            let outcome: LocalStore.ApplyOutcome
            do {
                outcome = try store.apply(response)
            } catch let error as StoreError where error.code == .schemaOutdated && !refreshedSchema {
                // The server's schema grew since the store was opened: follow it (additively) and apply again.
                refreshedSchema = true
                let schema = try await remote.schema()
                report.requests += 1
                try store.migrate(to: schema)
                outcome = try store.apply(response)
            }
            report.pulled += response.changes.count
            report.applied += outcome.applied
            let newResets = Set(outcome.reset).subtracting(resetSpaces)
            resetSpaces.formUnion(outcome.reset)
            current.pulled += response.changes.count
            await progress(.pulling, current)
            if !response.hasMore && newResets.isEmpty { break }
        }
        report.resetSpaces = resetSpaces.count
        let finished = store.now()
        report.finishedAt = finished
        try store.setLastSyncedAt(finished)
        return report
    }
}
