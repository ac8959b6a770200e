import FerryCore
import Foundation
import Logging

/// One sync: create spaces queued offline, keep encrypted spaces' keys, push the whole outbox in batches,
/// then pull until the server has no more. ``PostLoginSync`` runs the same steps with its own progress.
struct SyncPass: Sendable {
    let store: LocalStore
    let remote: any SyncRemote
    let pushBatchSize: Int
    let pullLimit: Int
    /// How this device reads and writes encrypted spaces; without it they stay locked.
    var encryption: EndToEndEncryption?
    var logger = Logger(label: "ferry.sync")
    /// When pulled records' blobs download, the cache's size limit, and whether the network is expensive now.
    var blobDownloads = BlobDownloadPolicy()
    var blobCacheLimit: Int64?
    var isNetworkExpensive = false

    /// The attachment queue's runner, when the remote serves blobs.
    var blobs: BlobTransferRunner? {
        (remote as? any BlobRemote).map {
            BlobTransferRunner(store: store, remote: $0, policy: blobDownloads, isNetworkExpensive: isNetworkExpensive, logger: logger)
        }
    }

    /// Runs the sync, reporting each phase and step to `progress`.
    func run(progress: @Sendable (SyncStatus.Phase, SyncProgress) async -> Void) async throws -> SyncReport {
        var report = SyncReport()
        report.startedAt = store.now()
        let keys = encryption.map { KeyUpkeep(store: store, encryption: $0, logger: logger) }
        var current = SyncProgress(pushTotal: try store.pendingCount())
        try await createPendingSpaces(&report)
        if let keys, try !store.encryptedSpaces().isEmpty {
            try await keys.run(&report)
        }
        await progress(.pushing, current)
        // Files first: a record is pushed only once the server holds the files it names.
        let beforePush = current
        try await blobs?.uploadAll(&report) { blobs in
            var shown = beforePush
            shown.blobs = blobs
            await progress(.pushing, shown)
        }
        try await pushOutbox(&report, keys: keys) { pushed in
            current.pushed = pushed
            current.pushTotal = max(current.pushTotal, pushed)
            await progress(.pushing, current)
        }
        await progress(.pulling, current)
        try await pullAll(&report, keys: keys) { pulled in
            current.pulled = pulled
            await progress(.pulling, current)
        }
        if let blobs {
            let afterPull = current
            try await blobs.downloadAll(&report) { blobs in
                var shown = afterPull
                shown.blobs = blobs
                await progress(.pulling, shown)
            }
            if let blobCacheLimit { try store.evictBlobs(toFit: blobCacheLimit) }
        }
        let finished = store.now()
        report.finishedAt = finished
        try store.setLastSyncedAt(finished)
        return report
    }

    /// Spaces created offline exist on the server before the records written into them arrive.
    func createPendingSpaces(_ report: inout SyncReport) async throws {
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
    }

    /// The last outbox entry this sync may send: below entries of locked spaces (parked behind it) and below the first
    /// entry that names a file still uploading.
    private func outboxCeiling(_ locked: Set<UUID>) async throws -> Int64 {
        let ceiling = try await store.offCooperativePool { try $0.parkLockedEntries(locked) }
        guard let waiting = try await store.offCooperativePool({ try $0.firstEntryWaitingForUpload() }) else { return ceiling }
        return min(ceiling, waiting - 1)
    }

    /// Push: every entry that was in the outbox, oldest first. Acked entries leave in the ack's transaction;
    /// unacked ones stay for the next sync, and `after` keeps this one from sending them twice. Records of an
    /// encrypted space are sealed on the way out. Entries of spaces whose key this device lacks wait at the end
    /// of the outbox (``LocalStore/parkLockedEntries(_:)``) and never hold back the others.
    ///
    /// Only one push is ever in flight, but a reply's acknowledgement is written while the next batch is on the wire
    /// (``PendingAcknowledgement``), and always before the one after it. Entries whose acknowledgement is lost to a
    /// crash are sent again and answered `duplicate`.
    func pushOutbox(_ report: inout SyncReport, keys: KeyUpkeep?, pushed: (Int) async -> Void) async throws {
        var after: Int64 = 0
        var batchSize = pushBatchSize
        var count = 0
        let encrypted = try store.encryptedSpaces()
        let locked = encrypted.isEmpty ? [] : try store.lockedSpaces()
        var ceiling = try await outboxCeiling(locked)
        var renumbered = false
        // The next batch, read from the outbox while this one is on the wire; used only if the loop then asks for
        // exactly that range (a renumbering or a smaller batch size asks for another).
        var prefetch: (range: OutboxRange, batch: Task<[Mutation], any Error>)?
        var pending: PendingAcknowledgement?
        /// Waits for the acknowledgement being written, and counts it.
        func settle() async throws {
            guard let acknowledging = pending else { return }
            pending = nil
            let acknowledgement = try await acknowledging.task.value
            if acknowledgement.acknowledged + acknowledgement.rejected + acknowledgement.deferred == 0 {
                throw Self.notAcknowledged(acknowledging.sent)
            }
            report.pushed += acknowledging.sent - acknowledgement.deferred
            report.rejected += acknowledgement.rejected
            count += acknowledging.sent
            await pushed(count)
        }
        defer {
            prefetch?.batch.cancel()
            noteWaiting(&report, locked)
        }
        do {
            while true {
                try Task.checkCancellation()
                let range = OutboxRange(after: after, limit: batchSize, ceiling: ceiling)
                var batch: [Mutation]
                if let prefetched = prefetch, prefetched.range == range {
                    batch = try await prefetched.batch.value
                } else {
                    prefetch?.batch.cancel()
                    batch = try await read(range)
                }
                prefetch = nil
                let fetched = batch.count
                var outgoing = batch
                if !encrypted.isEmpty {
                    outgoing = try seal(batch, encrypted: encrypted, keys: keys)
                    batch = Array(batch.prefix(outgoing.count))
                }
                guard let last = batch.last else { break }
                if fetched == range.limit {
                    let next = OutboxRange(after: last.mutationId, limit: range.limit, ceiling: range.ceiling)
                    prefetch = (next, Task { try await read(next) })
                }
                let response: PushResponse
                let cursors = try (pending?.cursorsAfter ?? [:]).merging(store.cursors(for: batch)) { expected, held in max(expected, held) }
                    .filter { space, _ in batch.contains { $0.space == space } }
                do {
                    report.requests += 1
                    response = try await remote.push(PushRequest(deviceId: store.deviceId, mutations: outgoing, cursors: cursors))
                } catch let error as AuthError where error.code == .mutationIDStale && !renumbered {
                    // This store reuses ids the server processed for other writes (it was reset or restored): number
                    // the waiting writes after the server's last one and send them again, once per sync.
                    guard let lastProcessed = error.lastMutationId else { throw error }
                    try await settle()
                    renumbered = true
                    _ = try await store.offCooperativePool { try $0.renumberOutbox(after: lastProcessed) }
                    ceiling = try await outboxCeiling(locked)
                    after = 0
                    continue
                } catch let error as AuthError where error.code == .deviceNotRegistered {
                    // The session is bound to no device yet (PostLoginSync registers it): the writes wait, the pull runs.
                    logger.notice("local changes wait until this device is registered", metadata: ["ferry.error.code": "\(error.code)"])
                    report.waitingForDeviceRegistration = true
                    break
                } catch let error as AuthError where error.status == 413 || error.code == .batchTooLarge {
                    // Too big for the server: halve the batch; a single mutation too large on its own is refused
                    // here, as the server would, so it cannot block the outbox.
                    if batch.count > 1 {
                        batchSize = max(1, batch.count / 2)
                    } else {
                        try await settle()
                        try store.rejectLocally(last, code: .recordTooLarge, message: "The change is larger than the server accepts (\(error.message)).")
                        report.pushed += 1
                        report.rejected += 1
                        after = last.mutationId
                    }
                    continue
                }
                // A reply that names none of the batch's mutations acknowledges nothing: stop before sending more (the
                // acknowledgement written below would find it too, but only once the next batch was on the wire).
                let sentIDs = Set(batch.map(\.mutationId))
                guard response.results.contains(where: { sentIDs.contains($0.mutationId) }) else {
                    throw Self.notAcknowledged(batch.count)
                }
                // The previous batch's acknowledgement comes first: entries leave the outbox in order.
                try await settle()
                // The plaintext batch: rejections keep what the user wrote, not its ciphertext.
                let sent = batch
                let store = self.store
                pending = PendingAcknowledgement(
                    task: Task { try await store.offCooperativePool { try $0.acknowledge(response, for: sent, sentCursors: cursors) } },
                    sent: batch.count, cursorsAfter: PendingAcknowledgement.cursors(after: response, sent: cursors)
                )
                after = last.mutationId
                // A key that vanished mid-push (it cannot, short of a damaged store): send nothing past it.
                if batch.count < fetched { break }
            }
            try await settle()
        } catch {
            // Whatever failed, the acknowledgement already under way is written, and counted, before the error goes up.
            try? await settle()
            throw error
        }
    }

    private static func notAcknowledged(_ sent: Int) -> SyncError {
        SyncError(code: .pushNotAcknowledged, message: "The server acknowledged none of \(sent) pushed changes; they stay in the outbox.", isRetryable: true)
    }

    /// The acknowledgement of the last reply, being written while the next batch is on the wire.
    private struct PendingAcknowledgement {
        var task: Task<LocalStore.Acknowledgement, any Error>
        /// How many entries the push sent.
        var sent: Int
        /// The cursors the acknowledgement moves the store to, which the next push is sent with: its reply can move
        /// them again only from there (``LocalStore/acknowledge(_:for:sentCursors:)`` checks that the store holds them).
        var cursorsAfter: [UUID: Int64]

        static func cursors(after response: PushResponse, sent: [UUID: Int64]) -> [UUID: Int64] {
            sent.merging(response.cursors.filter { space, seq in sent[space].map { seq > $0 } ?? false }) { _, moved in moved }
        }
    }

    /// Outbox entries with ids in `(after, ceiling]`, at most `limit` of them.
    private struct OutboxRange: Equatable {
        var after: Int64
        var limit: Int
        var ceiling: Int64
    }

    private func read(_ range: OutboxRange) async throws -> [Mutation] {
        try await store.offCooperativePool { try $0.pendingMutations(limit: range.limit, after: range.after, through: range.ceiling) }
    }

    private func noteWaiting(_ report: inout SyncReport, _ locked: Set<UUID>) {
        guard let waiting = try? store.pendingCount(in: locked), waiting > 0 else { return }
        report.lockedSpaces = max(report.lockedSpaces, locked.count)
        logger.notice("local changes wait for an encrypted space's key", metadata: ["ferry.outbox.waiting": "\(waiting)"])
    }

    /// The longest prefix of `batch` this device can send, records of encrypted spaces sealed.
    private func seal(_ batch: [Mutation], encrypted: [UUID: Int], keys: KeyUpkeep?) throws -> [Mutation] {
        var sealed: [Mutation] = []
        for mutation in batch {
            guard let version = encrypted[mutation.space] else {
                sealed.append(mutation)
                continue
            }
            guard let keys, version > 0, let key = try keys.keyring.key(space: mutation.space, version: version) else { break }
            sealed.append(try keys.sealer(schema: store.schema).seal(mutation, with: key))
        }
        return sealed
    }

    /// Pull: until the server has no more; a space the server resets is pulled again from 0 in the same sync.
    /// Encrypted spaces whose key this device lacks are left out (their cursors stay, so nothing is skipped);
    /// a key that arrives mid-sync (another device sealed it) is fetched once and the space pulled after all.
    ///
    /// While a page is applied, the next ones are already requested (``PullAhead``), so the server reads and sends
    /// them while this device writes (on a first sync the two took turns). A page requested ahead is used only if the
    /// request the store's state makes after the apply is the same one; otherwise it is dropped.
    func pullAll(_ report: inout SyncReport, keys: KeyUpkeep?, pulled: (Int) async -> Void) async throws {
        var resetSpaces = Set<UUID>()
        var refreshedSchema = false
        var unreadable = Set<UUID>()
        var fetchedKeys = false
        var count = 0
        let ahead = PullAhead(remote: remote)
        defer { ahead.close() }
        while true {
            try Task.checkCancellation()
            let locked = try store.lockedSpaces().union(unreadable)
            let request = PullRequest(cursors: try store.cursors(), limit: pullLimit, exclude: locked, clockForm: .row)
            var response: PullResponse
            if let prefetched = try await ahead.take(request) {
                response = prefetched
            } else {
                response = try await remote.pull(request)
                report.requests += 1
                ahead.start(after: request, response)
            }
            try store.recordKeyVersions(response.keyVersions)
            let opened = try open(response, keys: keys)
            response = opened.response
            if !(response.resetRequired.isEmpty && opened.unreadable.isEmpty) {
                ahead.cancel()  // the next request will differ
            }
            if !opened.unreadable.isEmpty {
                if let keys, !fetchedKeys {
                    // A key may have been sealed to this device since the sync began: fetch once, then pull
                    // these spaces again (those still without a key are excluded as locked).
                    fetchedKeys = true
                    try await keys.run(&report)
                } else {
                    unreadable.formUnion(opened.unreadable)
                }
            }
            let outcome: LocalStore.ApplyOutcome
            let page = response
            do {
                outcome = try await store.offCooperativePool { try $0.apply(page) }
            } catch let error as StoreError where error.code == .schemaOutdated && !refreshedSchema {
                // The server's schema grew since the store was opened: follow it (additively) and apply again.
                refreshedSchema = true
                let schema = try await remote.schema()
                report.requests += 1
                try store.migrate(to: schema)
                outcome = try await store.offCooperativePool { try $0.apply(page) }
            }
            report.pulled += response.changes.count
            report.applied += outcome.applied
            let newResets = Set(outcome.reset).subtracting(resetSpaces)
            resetSpaces.formUnion(outcome.reset)
            count += response.changes.count
            await pulled(count)
            if !response.hasMore && newResets.isEmpty && opened.unreadable.isEmpty { break }
        }
        report.requests += ahead.requests
        report.resetSpaces = resetSpaces.count
        report.lockedSpaces = max(report.lockedSpaces, try store.lockedSpaces().union(unreadable).count)
    }

    /// `response` with encrypted spaces' records opened; a space any of whose records cannot be opened is taken
    /// out whole (its changes and its cursor), so it is pulled again once its key is here.
    private func open(_ response: PullResponse, keys: KeyUpkeep?) throws -> (response: PullResponse, unreadable: Set<UUID>) {
        let encrypted = try store.encryptedSpaces()
        guard response.changes.contains(where: { encrypted[$0.space] != nil }) else { return (response, []) }
        var unreadable = Set<UUID>()
        var changes: [Change] = []
        let sealer = keys?.sealer(schema: store.schema)
        for change in response.changes {
            guard encrypted[change.space] != nil else {
                changes.append(change)
                continue
            }
            guard !unreadable.contains(change.space) else { continue }
            do {
                guard let sealer else { throw RecordSealer.SealingFailure.keyMissing(space: change.space, version: 0) }
                changes.append(try sealer.open(change))
            } catch {
                logger.notice("an encrypted space's records wait for its key", metadata: [
                    "ferry.space": "\(change.space.lowercasedText)", "ferry.error": "\(error)",
                ])
                unreadable.insert(change.space)
            }
        }
        var opened = response
        opened.changes = changes.filter { !unreadable.contains($0.space) }
        for space in unreadable { opened.cursors[space] = nil }
        return (opened, unreadable)
    }
}
