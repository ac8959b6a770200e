import FerryCore
import Foundation

/// A push planned before its transaction, on the guess that none of its records is stored and that the push it
/// follows is the device's last: what a device's first sync of new records sends, push after push.
///
/// Both engines run a device's pushes one at a time, and SQLite every push of every device on its one writer, so what
/// a push does under its locks is time the pushes behind it wait. The guess is checked there against what a plan is
/// made from anyway: the device's last processed id, and the rows (none of them stored). A plan is a function of
/// those alone, so when they match, the plan made before is the plan the transaction would make; when they differ,
/// the push plans as if there were no guess.
struct PlanGuess: Sendable {
    /// The device's last processed id the plan assumed: the last id of the push this one follows.
    let previousMutationID: Int64
    let plan: PushPlan

    /// The guess for `batch`, or `nil` when it follows no push (its device's last id is unknown before the lock) or
    /// carries an id at or below the one it follows (a replay: its fingerprints must be read).
    init?(_ batch: PushBatch) {
        guard let follows = batch.follows, !PushPlan.needsProcessed(batch, previousMutationID: follows),
              let plan = try? PushPlan(batch, previousMutationID: follows, processed: ProcessedBatch(), loaded: [:], children: [:])
        else { return nil }
        (previousMutationID, self.plan) = (follows, plan)
    }

    /// Whether the plan is the one the push makes under its locks: the device's last id is the one assumed, and
    /// none of the rows the push reads is stored (so no stored child either).
    func holds(previousMutationID previous: Int64, loaded: [RecordKey: StoredRecord]) -> Bool {
        previous == previousMutationID && loaded.isEmpty
    }
}
