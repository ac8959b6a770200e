import FerryCore
import Foundation

/// A push planned and encoded before its transaction, on the guess that none of its records is stored and that the
/// push it follows is the device's last: what a device's first sync of new records sends, push after push.
///
/// A device's pushes commit one at a time (its progress row is locked), so whatever a push does between taking that
/// lock and committing is time every later push of the device waits. Planning and encoding were most of it. The guess
/// is checked under the locks against what the plan reads anyway: the device's last processed id, and the rows
/// (none of them stored). A plan is a function of those alone, so when they match, the plan made before is the plan
/// the transaction would make; when they differ, it plans as if there were no guess.
struct SpeculativePush: Sendable {
    /// The device's last processed id the plan assumed: the last id of the push this one follows.
    let previousMutationID: Int64
    let plan: PushPlan
    let layout: WriteLayout
    /// The rows of each of the layout's batches, encoded (all of them new).
    let columns: [String: RecordColumns]
    /// Whether the guess needs no read to check: every mutation applies, none deletes, no row has unique keys, and
    /// every row the plan would read (each record and each parent named) is one it inserts. A stored one then makes
    /// the insert fail whole (``PostgresStorage/IDTaken``), and the push plans again on the stored rows; otherwise the
    /// plan is the one the push would make, without locking the spaces before their sequence numbers or loading rows.
    let readsNothing: Bool

    /// The guess for `batch`, or `nil` when it follows no push (its device's last id is unknown before the lock) or
    /// carries an id at or below the one it follows (a replay: its fingerprints must be read).
    init?(_ batch: PushBatch) {
        guard let follows = batch.follows, !PushPlan.needsProcessed(batch, previousMutationID: follows),
              let plan = try? PushPlan(batch, previousMutationID: follows, processed: ProcessedBatch(), loaded: [:], children: [:])
        else { return nil }
        let layout = WriteLayout(plan)
        var columns: [String: RecordColumns] = [:]
        for rows in layout.batches {
            guard let encoded = try? RecordColumns(rows.collection, writes: rows.writes, sealedSpaces: batch.sealedSpaces) else { return nil }
            columns[rows.collection.name] = encoded
        }
        (previousMutationID, self.plan, self.layout, self.columns) = (follows, plan, layout, columns)
        let written = Set(plan.writes.map(\.key))
        readsNothing = layout.keyed.isEmpty && PushPlan.deleteRoots(batch.entries).isEmpty
            && plan.results.allSatisfy { $0.status == .applied } && PushPlan.keysToLoad(batch.entries).isSubset(of: written)
    }

    /// Whether the plan is the one the push makes under its locks: the device's last id is the one assumed, and
    /// none of the rows the push reads is stored (so no stored child either).
    func holds(previousMutationID previous: Int64, loaded: [RecordKey: StoredRecord]) -> Bool {
        previous == previousMutationID && loaded.isEmpty
    }
}
