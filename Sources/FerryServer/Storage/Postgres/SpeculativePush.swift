import FerryCore
import Foundation

/// A PostgreSQL push planned and encoded before its transaction (``PlanGuess``), with its layout and its rows' columns.
///
/// A device's pushes commit one at a time (its progress row is locked), so whatever a push does between taking that
/// lock and committing is time every later push of the device waits. Planning and encoding were most of it.
struct SpeculativePush: Sendable {
    let guess: PlanGuess
    var previousMutationID: Int64 { guess.previousMutationID }
    var plan: PushPlan { guess.plan }
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
    /// `reads`: what the push would read under its locks (``PushReads``), of which the guess must write every row.
    init?(_ batch: PushBatch, reads: PushReads) {
        guard let guess = PlanGuess(batch) else { return nil }
        let plan = guess.plan
        let layout = WriteLayout(plan)
        var columns: [String: RecordColumns] = [:]
        for rows in layout.batches {
            guard let encoded = try? RecordColumns(rows.collection, writes: rows.writes, sealedSpaces: batch.sealedSpaces) else { return nil }
            columns[rows.collection.name] = encoded
        }
        (self.guess, self.layout, self.columns) = (guess, layout, columns)
        // Without deletes nothing cascades, so every row written is a record a mutation names: one of `reads`' keys,
        // each written once. All of them are written exactly when there are as many writes as keys.
        readsNothing = layout.keyed.isEmpty && PushPlan.deleteRoots(batch.entries).isEmpty
            && plan.results.allSatisfy { $0.status == .applied } && plan.writes.count == reads.keyCount
    }

    /// Whether the plan is the one the push makes under its locks (``PlanGuess/holds(previousMutationID:loaded:)``).
    func holds(previousMutationID previous: Int64, loaded: [RecordKey: StoredRecord]) -> Bool {
        guess.holds(previousMutationID: previous, loaded: loaded)
    }
}
