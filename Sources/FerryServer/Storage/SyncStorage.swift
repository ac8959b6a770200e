import FerryCore
import Foundation

/// The inputs of one push, validated, ready for the engine's transaction.
struct PushBatch: Sendable {
    var userID: UUID
    /// The pushing device, whose progress row the push reads and moves; `nil` for a write the server makes for a
    /// table request (``WriteIntent``), which has no mutation ids to remember.
    var deviceID: UUID?
    var entries: [Result<ValidatedMutation, Rejection>]
    var mutationIDs: [Int64]
    /// Each mutation's ``MutationFingerprint``, in request order.
    var fingerprints: [MutationFingerprint]
    var schema: Schema
    var now: Date
    /// The end-to-end encrypted spaces among the caller's: their records' values go to the `_sealed` column.
    var sealedSpaces: Set<UUID> = []
    /// The device's pull cursors of the spaces it pushes to (``PushRequest/cursors``).
    var cursors: [UUID: Int64] = [:]
    /// The last mutation id of the push this one was sent behind (``PushRequest/follows``).
    var follows: Int64?
    /// How the merge treats the records the push names: a device's writes merge by their clocks; a table request's
    /// (``WriteIntent``) are ordered by arrival and hold together.
    var intent = WriteIntent.merge
}

/// A space and the cursor a pull reads it after.
struct SpaceCursor: Sendable, Hashable {
    var space: UUID
    var cursor: Int64
}

/// The pages of one pull, collected space by space inside the engine's snapshot, within a count and a byte budget.
struct PullPages: Sendable {
    /// How many more changes the pull may carry (0 once its bytes are spent too).
    var remaining: Int
    /// How many more bytes of changes the pull may carry.
    var remainingBytes: Int
    var pages: [UUID: PullPage] = [:]

    init(limit: Int, bytes: Int) {
        remaining = limit
        remainingBytes = bytes
    }

    /// Adds the page of a space read after `start`, cut to the bytes left; the pull's first change always fits, so
    /// every pull makes progress. Once a page is cut, no further space is read.
    mutating func add(_ page: PullPage, of space: UUID, after start: Int64) {
        let (cut, used) = page.limited(toBytes: remainingBytes, atLeastOne: !hasChanges, start: start)
        pages[space] = cut
        hasChanges = hasChanges || !cut.changes.isEmpty
        remaining = cut.changes.count < page.changes.count ? 0 : remaining - cut.changes.count
        remainingBytes -= used
        // A first change larger than the cap spent it all: no other space is read for a page that could hold nothing.
        if remainingBytes <= 0 { remaining = 0 }
    }

    private var hasChanges = false
}

/// What one space contributes to a pull.
struct PullPage: Sendable {
    var changes: [WireChange]
    var cursor: Int64
    var hasMore: Bool
    var resetRequired: Bool
}

/// A committed push: the reply, and the sequence number each space it wrote rows in reached.
struct PushOutcome: Sendable {
    var response: PushResponse
    /// Each written space's last sequence number after the push.
    var committed: [UUID: Int64]
    /// Mutations merged with a later change to one of their fields.
    var conflicts = 0

    /// The reply to `batch` once `plan` committed, with `committed` the last sequence number of each space written.
    ///
    /// A space's cursor moves past the push (``PushResponse/cursors``) when the device's cursor stood at the space's
    /// last commit before it (so the device held every row of the space) and the push wrote only the records its
    /// mutations name: the device then holds every row up to the new last commit, each as the push left it (a merge
    /// of what it held with its own writes; lowered clocks come back in the results).
    init(batch: PushBatch, plan: PushPlan, committed: [UUID: Int64]) {
        var cursors: [UUID: Int64] = [:]
        let written = plan.rowsPerSpace
        for space in plan.spacesWithOnlyOwnWrites {
            guard let last = committed[space], let count = written[space], let cursor = batch.cursors[space] else { continue }
            if cursor == last - count { cursors[space] = last }
        }
        response = PushResponse(results: plan.results, lastMutationId: plan.lastMutationID, cursors: cursors)
        self.committed = committed
        // A write that broke a unique key rejected its mutations after the plan counted them.
        conflicts = plan.conflicts.filter { plan.results.indices.contains($0) && plan.results[$0].status == .applied }.count
    }
}

/// Records: pushes, pulls and tombstone garbage collection.
protocol RecordStorage: Sendable {
    /// Runs a push in one transaction: reads the rows it touches under the spaces' locks, plans, writes, commits.
    func push(_ batch: PushBatch) async throws -> PushOutcome
    /// Up to `limit` changes and about `bytes` of them in all (at least one), read in one snapshot, purge marks
    /// included: each space in `cursors`' order contributes its changes after its cursor, across every collection, in
    /// sequence order, until the limit is spent. Spaces left unread once it is spent have no page.
    /// Changes are written in the reply's JSON as they are read, in `format`.
    func pull(_ cursors: [SpaceCursor], limit: Int, bytes: Int, schema: Schema, format: PullFormat) async throws -> [UUID: PullPage]
    /// Deletes tombstones last changed before `cutoff` and raises each space's purge mark; returns how many went.
    func purgeTombstones(before cutoff: Date, schema: Schema) async throws -> Int
    /// The blobs live records name, with their records' spaces: what blob collection keeps.
    func referencedBlobs(schema: Schema) async throws -> Set<BlobKey>
}
