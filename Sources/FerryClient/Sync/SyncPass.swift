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
    /// The size of each blob request (``SyncEngine/Configuration/blobChunkSize``, growing up to its limit).
    var blobChunks = SyncEngine.Configuration().blobChunks
    var blobCacheLimit: Int64?
    var isNetworkExpensive = false

    /// The attachment queue's runner, when the remote serves blobs.
    var blobs: BlobTransferRunner? {
        (remote as? any BlobRemote).map {
            BlobTransferRunner(
                store: store, remote: $0, policy: blobDownloads, chunks: blobChunks, isNetworkExpensive: isNetworkExpensive, logger: logger
            )
        }
    }

    /// Runs the sync, reporting each phase and step to `progress`.
    func run(progress: @Sendable (SyncStatus.Phase, SyncProgress) async -> Void) async throws -> SyncReport {
        // One process syncs a store file at a time (an app and its extensions share it): the others wait here.
        try await store.syncLock?.acquire()
        defer { store.syncLock?.release() }
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

    /// Spaces created offline exist on the server before the records written into them arrive. A space the server
    /// refuses for good (``finalSpaceRefusals``) is dropped, not asked for at every sync, and stops no other space's
    /// sync: the records written into it become rejections at once. Any other failure stops this sync, to be retried.
    func createPendingSpaces(_ report: inout SyncReport) async throws {
        for request in try store.pendingSpaces() {
            guard let id = request.id else { continue }
            report.requests += 1
            do {
                _ = try await remote.createSpace(request)
            } catch let error as RemoteError where error.code == .spaceExists {
                // Created by an earlier sync whose answer was lost.
            } catch let error as RemoteError where Self.finalSpaceRefusals.contains(error.code) {
                logger.warning("a space created offline was refused; the changes written into it are rejected", metadata: [
                    "ferry.space": "\(id.lowercasedText)", "ferry.error.code": "\(error.code)",
                ])
                report.rejected += try store.spaceRefused(id, code: error.code.rawValue, message: error.message)
                continue
            }
            try store.spaceCreated(id)
        }
    }

    /// The refusals of a new space that asking again will not change: the account holds as many spaces as the server
    /// allows, or the request itself is invalid.
    static let finalSpaceRefusals: Set<ErrorCode> = [.tooManySpaces, .validationFailed]

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
                outcome = try await store.write { [store] db in try store.apply(page, in: db) }
            } catch let error as StoreError where error.code == .schemaOutdated && !refreshedSchema {
                // The server's schema grew since the store was opened: follow it (additively) and apply again.
                refreshedSchema = true
                let schema = try await remote.schema()
                report.requests += 1
                try store.migrate(to: schema)
                outcome = try await store.write { [store] db in try store.apply(page, in: db) }
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

    /// Applies changes a realtime poke carried for `space` in one transaction, if the space's cursor is at least
    /// their start (`after`), and reports it (trigger `realtimeCarried`, no request); a report of nothing pulled when
    /// the cursor is at their end already. `nil`, changing nothing, when the device must pull instead: a gap, a space
    /// it has never pulled, a record it cannot open yet, or a reply that is not one space's complete page.
    ///
    /// - Throws: ``StoreError`` `schema_outdated` as a pull's apply does (the sync that follows migrates).
    func applyCarried(_ carried: CarriedChanges, space: UUID) async throws -> SyncReport? {
        let response = carried.pull
        guard let seq = response.cursors[space], response.cursors.count == 1, !response.hasMore, response.resetRequired.isEmpty,
              response.changes.allSatisfy({ $0.space == space })
        else { return nil }
        var report = SyncReport()
        report.triggers = ["realtimeCarried"]
        report.startedAt = store.now()
        // A plain space's changes take one transaction, which also finds whether the space is encrypted (one store
        // access per poke, where reading that first took two). An encrypted one's are opened and applied in a second:
        // its keyring reads the store, which it cannot do inside the store's write.
        var outcome = try await applyCarried(response, space: space, after: carried.after, through: seq, plainOnly: true)
        if case .sealed = outcome {
            let opened = try open(response, keys: encryption.map { KeyUpkeep(store: store, encryption: $0, logger: logger) })
            guard opened.unreadable.isEmpty else { return nil }
            outcome = try await applyCarried(opened.response, space: space, after: carried.after, through: seq, plainOnly: false)
        }
        guard case .applied(let changes, let rows) = outcome else { return nil }
        report.pulled = changes
        report.applied = rows
        report.finishedAt = store.now()
        return report
    }

    /// How one transaction of ``applyCarried(_:space:)`` ended.
    private enum CarriedOutcome: Sendable {
        /// The space's cursor is behind the changes' start, or the space was never pulled: the device must pull.
        case gap
        /// The space is encrypted and the changes not yet opened.
        case sealed
        /// Applied: `changes` changes, `rows` rows (both 0 when the cursor was at their end already).
        case applied(changes: Int, rows: Int)
    }

    private func applyCarried(_ page: PullResponse, space: UUID, after: Int64, through seq: Int64, plainOnly: Bool) async throws -> CarriedOutcome {
        try await store.write { [store] db in
            // A space never pulled is a gap whatever `after` says: its first pull also tells whether it is encrypted
            // (an encrypted space's records are opened only once the store knows it is one).
            guard let cursor = try store.cursor(of: space, in: db), cursor >= after else { return .gap }
            guard cursor < seq else { return .applied(changes: 0, rows: 0) }
            if plainOnly, !page.changes.isEmpty, try store.isEncrypted(space, in: db) { return .sealed }
            return .applied(changes: page.changes.count, rows: try store.apply(page, in: db).applied)
        }
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
