import FerryCore
import Foundation
import Logging

/// The rules of `/sync/v1`: who may push and pull what, with which limits. Engine-agnostic:
/// storage runs each push in one transaction and shares ``PushPlan`` for the merge.
struct SyncService: Sendable {
    typealias Storage = RecordStorage & SpaceStorage & DeviceStorage
    let storage: any Storage
    let schema: Schema
    let limits: SyncLimits
    let logger: Logger
    /// Announces each commit to open streams.
    let events: any RealtimeFeed
    /// Checks that the blobs a pushed record names are held; `nil` only in tests of the push alone.
    var blobs: BlobService?
    var now: @Sendable () -> Date = Date.init
    /// Reads the next page of a paged pull while the client reads this one; `nil` reads each page when asked.
    var readAhead: PullReadAhead?
    /// Counts each commit's mutations by outcome; `nil` in tests of the service alone.
    var metrics: SyncMetrics?

    /// The largest mutation id: 2^53 - 1, the largest integer a JSON number carries exactly everywhere.
    static let largestMutationID: Int64 = 9_007_199_254_740_991

    /// Runs a push for the device the caller's session is bound to (a whole-request error for any other).
    func push(_ caller: SyncCaller, request: PushRequest) async throws -> PushResponse {
        let userID = caller.userID
        guard let device = caller.device else {
            throw ServiceError(.forbidden, .deviceNotRegistered,
                "This session is not bound to a device; register device \(request.deviceId.lowercasedText) with PUT /sync/v1/devices/{id} before pushing."
            )
        }
        guard device.id == request.deviceId else {
            throw ServiceError(.forbidden, .deviceMismatch,
                "This session is bound to device \(device.id.lowercasedText); a session pushes only its own device's writes."
            )
        }
        guard request.mutations.count <= limits.maximumBatchLength else {
            throw ServiceError(.unprocessable, .batchTooLarge,
                "The push has \(request.mutations.count) mutations; send at most \(limits.maximumBatchLength) per request."
            )
        }
        for (previous, next) in zip(request.mutations, request.mutations.dropFirst()) where next.mutationId <= previous.mutationId {
            throw ServiceError(.unprocessable, .mutationOrder,
                "Mutation ids must increase within a push: \(next.mutationId) follows \(previous.mutationId)."
            )
        }
        if let first = request.mutations.first, first.mutationId < 1 {
            throw ServiceError(.unprocessable, .mutationOrder, "Mutation ids start at 1.")
        }
        if let last = request.mutations.last, last.mutationId > Self.largestMutationID {
            throw ServiceError(.unprocessable, .mutationOrder, "Mutation ids go up to 2^53-1, which JSON carries exactly in every language.")
        }
        for (space, cursor) in request.cursors where cursor < 0 {
            throw ServiceError(.unprocessable, .validationFailed, "The cursor of space \(space.lowercasedText) is negative.")
        }
        if let follows = request.follows, follows < 0 || follows >= request.mutations.first?.mutationId ?? .max {
            throw ServiceError(.unprocessable, .mutationOrder,
                "follows (\(follows)) must be the last mutation id of an earlier push: at least 0 and below this push's first id."
            )
        }
        // Read now, after the body arrived: a slow upload must not carry a membership removed while it came in.
        let summaries = try await storage.spaces(userID: userID)
        let time = now()
        let validator = validator(userID: userID, spaces: summaries, now: time)
        var batch = PushBatch(
            userID: userID, deviceID: request.deviceId, entries: request.mutations.map(validator.validate),
            mutationIDs: request.mutations.map(\.mutationId),
            fingerprints: MutationFingerprint.of(request.mutations, recordLimit: limits.maximumRecordBytes),
            schema: schema, now: time
        )
        batch.sealedSpaces = Set(summaries.filter(\.isEncrypted).map(\.id))
        batch.cursors = request.cursors
        batch.follows = request.follows
        try await refuseMissingBlobs(&batch.entries)
        var response = try await commit(batch).response
        response.maxInFlight = limits.maximumPushesInFlight
        let rejected = response.results.filter { $0.status == .rejected }.count
        logger.debug("push", metadata: [
            "ferry.device.id": "\(request.deviceId.lowercasedText)", "ferry.sync.mutations": "\(request.mutations.count)",
            "ferry.sync.rejected": "\(rejected)", "ferry.sync.last_mutation_id": "\(response.lastMutationId)",
        ])
        return response
    }

    /// The checks a write of `userID` meets before any database work, with its roles in `spaces`, read after the
    /// write's body arrived (a slow upload must not carry a membership removed meanwhile).
    private func validator(userID: UUID, spaces: [SpaceSummary], now: Date) -> MutationValidator {
        let roles = Dictionary(spaces.map { ($0.id, $0.role) }, uniquingKeysWith: { first, _ in first })
        var validator = MutationValidator(schema: schema, limits: limits, userID: userID, roles: roles, now: now)
        // Key versions only grow, so a version valid now is still valid when the push commits.
        let encrypted = spaces.filter(\.isEncrypted)
        validator.keyVersions = Dictionary(encrypted.map { ($0.id, $0.keyVersion) }, uniquingKeysWith: { first, _ in first })
        return validator
    }

    /// Commits a table request's writes (`/rest/v1`) as one statement (``WriteIntent``): the same checks, merge,
    /// sequence numbers and realtime notices as a device's push, without a device. `spaces` are the caller's (the
    /// service role's: the spaces the writes name, each as owner). Any mutation refused, before the transaction or in
    /// it, refuses them all with ``PushPlan/Refusal/rejected(index:_:)``.
    func commitStatement(_ mutations: [Mutation], intent: WriteIntent, userID: UUID, spaces: [SpaceSummary]) async throws -> PushOutcome {
        let time = now()
        let validator = validator(userID: userID, spaces: spaces, now: time)
        var batch = PushBatch(
            userID: userID, deviceID: nil, entries: mutations.map(validator.validate), mutationIDs: mutations.map(\.mutationId),
            fingerprints: MutationFingerprint.of(mutations, recordLimit: limits.maximumRecordBytes), schema: schema, now: time
        )
        batch.sealedSpaces = Set(spaces.filter(\.isEncrypted).map(\.id))
        batch.intent = intent
        try await refuseMissingBlobs(&batch.entries)
        for (index, entry) in batch.entries.enumerated() {
            if case .failure(let rejection) = entry { throw PushPlan.Refusal.rejected(index: index, rejection) }
        }
        return try await commit(batch)
    }

    /// Pauses before trying again a push that arrived ahead of the one it follows: that one is most likely still
    /// arriving or committing, a few milliseconds behind (106 ms in all, then `409 push_out_of_order`). Few tries,
    /// since each is a transaction: a client naming a `follows` it never sent costs the server five.
    static let outOfOrderPauses: [Duration] = [2, 8, 32, 64].map { .milliseconds($0) }

    /// Runs the push's transaction and publishes its commits: a device's push, or a table request's
    /// (``WriteIntent``), whose rejected mutation comes back as ``PushPlan/Refusal/rejected(index:_:)``. A push that
    /// arrived before the push it follows had committed is tried again after a short pause, so the device need not
    /// send it again.
    func commit(_ batch: PushBatch) async throws -> PushOutcome {
        var pauses = Self.outOfOrderPauses[...]
        while true {
            do {
                let outcome = try await storage.push(batch)
                metrics?.count(outcome)
                await events.publish(outcome.committed.map { .committed(space: $0.key, seq: $0.value, origin: batch.deviceID) })
                return outcome
            } catch PushPlan.Refusal.outOfOrder(let follows, let last) where follows > last && !pauses.isEmpty {
                try await Task.sleep(for: pauses.removeFirst())
            } catch let refusal as PushPlan.Refusal {
                if case .rejected = refusal { throw refusal }
                throw Self.error(for: refusal)
            }
        }
    }

    private static func error(for refusal: PushPlan.Refusal) -> ServiceError {
        switch refusal {
        case .rejected(_, let rejection):
            ServiceError(.unprocessable, rejection.code, rejection.message)
        case .staleMutationID(let mutationID, let lastMutationID):
            ServiceError(.conflict, .mutationIDStale,
                "Mutation id \(mutationID) was processed for a different write of this device (its store was reset or restored); number waiting writes after \(lastMutationID) and push again.",
                details: ["last_mutation_id": .number(Double(lastMutationID))]
            )
        case .outOfOrder(let follows, let lastMutationID):
            ServiceError(.conflict, .pushOutOfOrder,
                "This push follows mutation \(follows), but the last this device's pushes reached is \(lastMutationID) (the push it follows has not committed); nothing changed: send it again once the earlier push is answered.",
                details: ["last_mutation_id": .number(Double(lastMutationID))]
            )
        }
    }

    /// Turns each mutation naming a blob its space does not hold into a `blob_missing` rejection, so no device ever
    /// pulls a reference it cannot download. (The device uploads first; the collector keeps a blob for the retention.)
    private func refuseMissingBlobs(_ entries: inout [Result<ValidatedMutation, Rejection>]) async throws {
        // Most schemas name no blobs: skip copying every validated mutation to find none.
        guard let blobs, schema.collections.contains(where: { !$0.blobFields.isEmpty }) else { return }
        func references(_ entry: Result<ValidatedMutation, Rejection>) -> [BlobReferenceInSpace] {
            guard case .success(let mutation) = entry else { return [] }
            return mutation.collection.blobFields.compactMap { field in
                mutation.state.fields[field.name].flatMap { try? BlobReference(json: $0) }
                    .map { BlobReferenceInSpace(space: mutation.mutation.space, blob: $0) }
            }
        }
        let named = Set(entries.flatMap(references))
        guard !named.isEmpty else { return }
        let missing = try await blobs.missing(named)
        guard !missing.isEmpty else { return }
        for index in entries.indices {
            guard let absent = references(entries[index]).first(where: missing.contains) else { continue }
            entries[index] = .failure(Rejection(
                .blobMissing,
                "Space \(absent.space.lowercasedText) holds no blob \(absent.blob.sha256) of \(absent.blob.size) bytes; upload it with PATCH /sync/v1/spaces/{space}/blobs/{sha256}, then push again."
            ))
        }
    }

    func pull(_ caller: SyncCaller, request: PullRequest) async throws -> PullReply {
        if let limit = request.limit, limit < 1 {
            throw ServiceError(.unprocessable, .validationFailed, "limit must be at least 1.")
        }
        for (space, cursor) in request.cursors where cursor < 0 {
            throw ServiceError(.unprocessable, .validationFailed, "The cursor of space \(space.lowercasedText) is negative.")
        }
        let spaces = try await spaces(of: caller, request: request)
        let reply: PullReply
        if let readAhead, let ready = await readAhead.take(readAheadKey(caller, request, spaces: spaces), spaces: spaces) {
            reply = ready
        } else {
            reply = try await read(request, spaces: spaces)
        }
        readNextPage(after: request, reply: reply, caller: caller, spaces: spaces)
        return reply
    }

    /// The caller's spaces, as read with its session when it has them (one round trip fewer, none from memory). Only
    /// for a pull, whose body is small: a push reads them after its body arrived. Spaces from memory that a cursor is
    /// ahead of, or that lack a space the request names, may be behind another instance's commit or membership: the
    /// database decides, so that no device is told to reset or loses a space it just joined.
    private func spaces(of caller: SyncCaller, request: PullRequest) async throws -> [SpaceSummary] {
        if let spaces = caller.spaces {
            guard caller.spacesMayLag else { return spaces }
            let known = Dictionary(spaces.map { ($0.id, $0.seq) }, uniquingKeysWith: max)
            let behind = request.cursors.contains { space, cursor in known[space].map { cursor > $0 } ?? true }
            if !behind { return spaces }
        }
        return try await storage.spaces(userID: caller.userID)
    }

    /// Starts reading the page a client paging through asks after `reply` (the same request from the reply's cursors),
    /// if it has more and resets nothing (a client that resets a space asks from 0 instead). One page ahead: on two
    /// cores, two ahead served no faster (docs/benchmarks.md).
    private func readNextPage(after request: PullRequest, reply: PullReply, caller: SyncCaller, spaces: [SpaceSummary]) {
        guard let readAhead, reply.hasMore, reply.resetRequired.isEmpty else { return }
        var next = request
        next.cursors.merge(reply.cursors) { _, new in new }
        let request = next
        readAhead.start(readAheadKey(caller, request, spaces: spaces), spaces: spaces) { try await read(request, spaces: spaces) }
    }

    /// What a page read ahead is held under: the caller, and the request as far as it decides the reply (so a client
    /// that sends back only the reply's cursors and one that keeps others meet the same page).
    private func readAheadKey(_ caller: SyncCaller, _ request: PullRequest, spaces: [SpaceSummary]) -> PullReadAhead.Key {
        var request = request
        let ids = Set(spaces.map(\.id))
        request.exclude = request.exclude.intersection(ids)
        request.cursors = request.cursors.filter { ids.contains($0.key) && !request.exclude.contains($0.key) && $0.value != 0 }
        return PullReadAhead.Key(userID: caller.userID, deviceID: caller.device?.id, request: request)
    }

    /// The reply to `request` from a user whose spaces are `spaces`.
    private func read(_ request: PullRequest, spaces: [SpaceSummary]) async throws -> PullReply {
        let limit = min(request.limit ?? limits.defaultPullLimit, limits.maximumPullLimit)
        let format = PullFormat(clockForm: request.clockForm, layout: request.layout)
        var response = PullReply(layout: request.layout)
        if request.layout == .rows {
            // The pages' columns from the writers that write their rows.
            response.rowColumns = Dictionary(uniqueKeysWithValues: schema.collections.map { ($0.name, format.writer(for: $0).rowColumns) })
        }
        var cursors: [SpaceCursor] = []
        for space in spaces {
            if space.isEncrypted { response.keyVersions[space.id] = space.keyVersion }
            if request.exclude.contains(space.id) { continue }
            let cursor = request.cursors[space.id] ?? 0
            // Ahead of every commit: the database was restored from a backup taken before the client's last pull.
            if cursor > space.seq {
                response.resetRequired.append(space.id)
                continue
            }
            response.cursors[space.id] = cursor
            // A space whose last commit the cursor has reached has nothing to read (and nothing purged past it,
            // since purges stay below the last commit): most spaces of most pulls, and every space of a no-op pull.
            if cursor < space.seq { cursors.append(SpaceCursor(space: space.id, cursor: cursor)) }
        }
        let pages = cursors.isEmpty ? [:] : try await storage.pull(
            cursors, limit: limit, bytes: limits.maximumPullBytes, schema: schema, format: format
        )
        for space in spaces where response.cursors[space.id] != nil {
            if response.cursors[space.id, default: 0] >= space.seq { continue }
            guard let page = pages[space.id] else {
                // Not read: the page filled up (in changes or bytes) before this space.
                response.hasMore = response.hasMore || space.seq > response.cursors[space.id, default: 0]
                continue
            }
            if page.resetRequired {
                response.resetRequired.append(space.id)
                continue
            }
            response.changes += page.changes
            response.cursors[space.id] = page.cursor
            response.hasMore = response.hasMore || page.hasMore
        }
        return response
    }
}
