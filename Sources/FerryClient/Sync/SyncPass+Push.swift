import FerryCore
import Foundation
import Logging

extension SyncPass {
    /// The most pushes a device keeps on the wire at once, when the server allows as many (``PushResponse/maxInFlight``).
    static let maximumPushesInFlight = 3

    /// Push: every entry that was in the outbox, oldest first. Acked entries leave in the ack's transaction;
    /// unacked ones stay for the next sync, and `after` keeps this one from sending them twice. Records of an
    /// encrypted space are sealed on the way out. Entries of spaces whose key this device lacks wait at the end
    /// of the outbox (``LocalStore/parkLockedEntries(_:)``) and never hold back the others.
    ///
    /// Once a reply says the server takes them (``PushResponse/maxInFlight``), up to three pushes are on the wire at
    /// once: the next ones cross the network and are decoded while the last one commits. Each names the push it was
    /// sent behind (``PushRequest/follows``), so the server never lets it overtake that one (`409 push_out_of_order`,
    /// sent again).
    /// Replies are handled in the order the pushes were sent, and a reply's acknowledgement is written while the next
    /// replies are awaited (``PendingAcknowledgement``), always before the one after it. When a push fails, the ones
    /// behind it are awaited and their replies dropped; their entries stay and are sent again, answered `duplicate`
    /// if they had committed after all. Entries whose acknowledgement is lost to a crash are sent again the same way.
    func pushOutbox(_ report: inout SyncReport, keys: KeyUpkeep?, pushed: (Int) async -> Void) async throws {
        var after: Int64 = 0
        var batchSize = pushBatchSize
        var count = 0
        let encrypted = try store.encryptedSpaces()
        let locked = encrypted.isEmpty ? [] : try store.lockedSpaces().union(unopenable(encrypted, keys: keys))
        var ceiling = try await outboxCeiling(locked)
        var renumbered = false
        /// How many pushes may be on the wire: one until a reply allows more.
        var window = 1
        /// Whether every entry up to the ceiling is on the wire (or a sealing stopped short of the rest).
        var sentAll = false
        var inFlight: [InFlightPush] = []
        var cursors = CursorForecast()
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
        /// Waits for the pushes still on the wire and drops their replies: they were sent behind one that failed.
        func abandonInFlight() async {
            if Task.isCancelled { for push in inFlight { push.task.cancel() } }
            for push in inFlight { _ = try? await push.task.value }
            inFlight = []
            cursors = CursorForecast()
        }
        defer {
            prefetch?.batch.cancel()
            noteWaiting(&report, locked)
        }
        do {
            while true {
                try Task.checkCancellation()
                while inFlight.count < window, !sentAll {
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
                    guard let last = batch.last else {
                        sentAll = true
                        break
                    }
                    if fetched == range.limit {
                        let next = OutboxRange(after: last.mutationId, limit: range.limit, ceiling: range.ceiling)
                        prefetch = (next, Task { try await read(next) })
                    }
                    // A key that vanished mid-push (it cannot, short of a damaged store): send nothing past it.
                    if batch.count < fetched { sentAll = true }
                    let sentCursors = cursors.forBatch(batch, held: try store.cursors(for: batch))
                    let request = PushRequest(deviceId: store.deviceId, mutations: outgoing, cursors: sentCursors, follows: inFlight.last?.last)
                    report.requests += 1
                    let remote = self.remote
                    inFlight.append(InFlightPush(
                        batch: batch, from: after, follows: request.follows, cursors: sentCursors,
                        task: Task { try await remote.push(request) }
                    ))
                    cursors.sent(batch, with: sentCursors)
                    after = last.mutationId
                }
                guard !inFlight.isEmpty else { break }
                let push = inFlight.removeFirst()
                let response: PushResponse
                do {
                    // A cancelled sync cancels the requests on the wire, not only its wait for them.
                    let onTheWire = [push.task] + inFlight.map(\.task)
                    response = try await withTaskCancellationHandler {
                        try await push.task.value
                    } onCancel: {
                        for task in onTheWire { task.cancel() }
                    }
                } catch {
                    await abandonInFlight()
                    prefetch?.batch.cancel()
                    prefetch = nil
                    sentAll = false
                    after = push.from
                    switch error {
                    case let error as RemoteError where error.code == .pushOutOfOrder && push.follows != nil:
                        // Sent behind a push that had not committed when this one arrived: that one is answered now,
                        // so this one goes again, alone (its reply opens the window again).
                        window = 1
                        continue
                    case let error as RemoteError where error.code == .mutationIDStale && !renumbered:
                        // This store reuses ids the server processed for other writes (it was reset or restored): number
                        // the waiting writes after the server's last one and send them again, once per sync.
                        guard let lastProcessed = error.lastMutationId else { throw error }
                        try await settle()
                        renumbered = true
                        window = 1
                        _ = try await store.write { [store] db in try store.renumberOutbox(after: lastProcessed, in: db) }
                        ceiling = try await outboxCeiling(locked)
                        after = 0
                        continue
                    case let error as RemoteError where error.code == .deviceNotRegistered:
                        // The session is bound to no device yet (PostLoginSync registers it): the writes wait, the pull runs.
                        logger.notice("local changes wait until this device is registered", metadata: ["ferry.error.code": "\(error.code)"])
                        report.waitingForDeviceRegistration = true
                    case let error as RemoteError where error.status == 413 || error.code == .batchTooLarge:
                        // Too big for the server: halve the batch; a single mutation too large on its own is refused
                        // here, as the server would, so it cannot block the outbox.
                        guard let last = push.batch.last else { throw error }
                        if push.batch.count > 1 {
                            batchSize = max(1, push.batch.count / 2)
                        } else {
                            try await settle()
                            try store.rejectLocally(last, code: .recordTooLarge, message: "The change is larger than the server accepts (\(error.message)).")
                            report.pushed += 1
                            report.rejected += 1
                            after = last.mutationId
                        }
                        continue
                    default:
                        throw error
                    }
                    break
                }
                // A reply that names none of the batch's mutations acknowledges nothing: stop before sending more (the
                // acknowledgement written below would find it too, but only once the next batch was on the wire).
                let sentIDs = Set(push.batch.map(\.mutationId))
                guard response.results.contains(where: { sentIDs.contains($0.mutationId) }) else {
                    throw Self.notAcknowledged(push.batch.count)
                }
                window = Self.window(after: response, to: push)
                cursors.answered(push.batch, sent: push.cursors, moved: response.cursors)
                // The previous batch's acknowledgement comes first: entries leave the outbox in order.
                try await settle()
                // The plaintext batch: rejections keep what the user wrote, not its ciphertext.
                let (sent, sentCursors, store) = (push.batch, push.cursors, self.store)
                pending = PendingAcknowledgement(
                    task: Task { try await store.write { [store] db in try store.acknowledge(response, for: sent, sentCursors: sentCursors, in: db) } },
                    sent: sent.count
                )
            }
            try await settle()
        } catch {
            // Whatever failed, no push of this sync stays on the wire, and the acknowledgement already under way is
            // written, and counted, before the error goes up.
            await abandonInFlight()
            try? await settle()
            throw error
        }
    }

    /// How many pushes may be on the wire after `response`: what the server allows, but only when its last processed
    /// id is the reply's batch's last. A server already past it holds ids of an earlier life of this store (a
    /// backup was restored), so the next push may be refused as `mutation_id_stale`, and one sent behind it must
    /// not go through while it is renumbered.
    private static func window(after response: PushResponse, to push: InFlightPush) -> Int {
        guard response.lastMutationId == push.last, let allowed = response.maxInFlight else { return 1 }
        return min(max(allowed, 1), maximumPushesInFlight)
    }

    private static func notAcknowledged(_ sent: Int) -> SyncError {
        SyncError(code: .pushNotAcknowledged, message: "The server acknowledged none of \(sent) pushed changes; they stay in the outbox.", isRetryable: true)
    }

    /// The last outbox entry this sync may send: below entries of locked spaces (parked behind it) and below the first
    /// entry that names a file still uploading.
    private func outboxCeiling(_ locked: Set<UUID>) async throws -> Int64 {
        let ceiling = try await store.parkLockedEntries(locked)
        guard let waiting = try await store.firstEntryWaitingForUpload() else { return ceiling }
        return min(ceiling, waiting - 1)
    }

    private func read(_ range: OutboxRange) async throws -> [Mutation] {
        try await store.read { db in try LocalStore.pushableMutations(limit: range.limit, after: range.after, through: range.ceiling, in: db) }
    }

    private func noteWaiting(_ report: inout SyncReport, _ locked: Set<UUID>) {
        guard let waiting = try? store.pendingCount(in: locked), waiting > 0 else { return }
        report.lockedSpaces = max(report.lockedSpaces, locked.count)
        logger.notice("local changes wait for an encrypted space's key", metadata: ["ferry.outbox.waiting": "\(waiting)"])
    }

    /// The encrypted spaces whose current key this device holds but cannot open (sealed to a key pair it no longer has,
    /// say in a store restored onto a new phone): locked like those without a key, so their writes wait and every other
    /// space syncs, until a trusted device seals the key to this one.
    private func unopenable(_ encrypted: [UUID: Int], keys: KeyUpkeep?) -> Set<UUID> {
        guard let keys else { return [] }
        return Set(encrypted.compactMap { space, version in
            guard version > 0 else { return nil }
            do {
                _ = try keys.keyring.key(space: space, version: version)
                return nil
            } catch {
                logger.notice("this device cannot open an encrypted space's key; its writes wait", metadata: ["ferry.space": "\(space.lowercasedText)"])
                return space
            }
        })
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
            // Sealing reads the values, parsed once here: a damaged entry stops the push rather than go out sealed empty.
            sealed.append(try keys.sealer(schema: store.schema).seal(LocalStore.parsed(mutation), with: key))
        }
        return sealed
    }
}

/// A push on the wire.
private struct InFlightPush {
    /// The plaintext entries it carries.
    var batch: [Mutation]
    /// The outbox position before them: where sending starts again if the push fails.
    var from: Int64
    /// The push it was sent behind (``PushRequest/follows``).
    var follows: Int64?
    /// The cursors it was sent with.
    var cursors: [UUID: Int64]
    var task: Task<PushResponse, any Error>

    var last: Int64 { batch.last?.mutationId ?? from }
}

/// The acknowledgement of the last reply, being written while the next replies are awaited.
private struct PendingAcknowledgement {
    var task: Task<LocalStore.Acknowledgement, any Error>
    /// How many entries the push sent.
    var sent: Int
}

/// Outbox entries with ids in `(after, ceiling]`, at most `limit` of them.
private struct OutboxRange: Equatable {
    var after: Int64
    var limit: Int
    var ceiling: Int64
}

/// The cursors a push is sent with, so that its reply can move them past the device's own writes
/// (``PushRequest/cursors``) even when it is sent before the reply to the push ahead of it.
///
/// A space's cursor after a push is forecast as the one it was sent with plus the records the push writes there,
/// which is what the server answers when nothing else wrote to the space. A wrong forecast costs only a pull: the
/// server moves a cursor only when it was the space's last commit, and the acknowledgement stores the moved cursor
/// only when the store holds the one the push was sent with (``LocalStore/acknowledge(_:for:sentCursors:)``).
private struct CursorForecast {
    private var expected: [UUID: Int64] = [:]

    /// The cursors to send `batch` with: the forecast where it is ahead of what the store holds.
    func forBatch(_ batch: [Mutation], held: [UUID: Int64]) -> [UUID: Int64] {
        held.merging(expected.filter { held[$0.key] != nil }, uniquingKeysWith: max)
    }

    /// A push of `batch` went out with `cursors`.
    mutating func sent(_ batch: [Mutation], with cursors: [UUID: Int64]) {
        for (space, written) in Self.recordsWritten(batch) {
            if let cursor = cursors[space] { expected[space] = cursor + Int64(written) }
        }
    }

    /// The reply to a push of `batch` sent with `sent` moved the cursors to `moved`. Where that is not the forecast,
    /// pushes sent behind it had the wrong cursor, and so will the next ones: the device pulls the space.
    mutating func answered(_ batch: [Mutation], sent: [UUID: Int64], moved: [UUID: Int64]) {
        for (space, written) in Self.recordsWritten(batch) {
            guard let cursor = sent[space], moved[space] != cursor + Int64(written) else { continue }
            expected[space] = cursor
        }
    }

    /// How many records of each space `batch` writes.
    private static func recordsWritten(_ batch: [Mutation]) -> [UUID: Int] {
        var records: [UUID: Set<RecordName>] = [:]
        // By index, reading three fields: a copy of each mutation retained all its texts (a push's device side spent
        // as much on those copies as on writing the request).
        for index in batch.indices {
            records[batch[index].space, default: []].insert(RecordName(collection: batch[index].collection, id: batch[index].id))
        }
        return records.mapValues(\.count)
    }

    private struct RecordName: Hashable {
        var collection: String
        var id: UUID
    }
}
