import Foundation
import Synchronization

/// What one open stream has still to send, coalesced: the highest announced sequence number per space and whether a
/// pull or a session check is asked for. However many events arrive while the stream writes, it holds one entry per
/// space, so a slow client costs memory bounded by its spaces, and no poke is dropped, only merged.
final class StreamMailbox: Sendable {
    /// The signals gathered since the stream last took them.
    struct Batch: Sendable, Equatable {
        /// The highest sequence number announced per space.
        var changes: [UUID: Int64] = [:]
        /// Whether the device should pull whatever the pokes say (membership changed, a gap in the feed).
        var sync = false
        /// Whether the stream should check its session and reload its spaces first.
        var recheck = false

        var isEmpty: Bool { changes.isEmpty && !sync && !recheck }
    }

    private struct State {
        var batch = Batch()
        var waiter: CheckedContinuation<Batch?, Never>?
        var isClosed = false
    }

    private let state = Mutex(State())

    /// Adds a commit announcement.
    func post(space: UUID, seq: Int64) {
        deliver { $0.changes[space] = max($0.changes[space] ?? 0, seq) }
    }

    /// Asks the device to pull, after a session check when `recheck`.
    func postSync(recheck: Bool) {
        deliver { batch in
            batch.sync = true
            batch.recheck = batch.recheck || recheck
        }
    }

    private func deliver(_ change: (inout Batch) -> Void) {
        let resumed: (CheckedContinuation<Batch?, Never>, Batch)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            change(&state.batch)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            defer { state.batch = Batch() }
            return (waiter, state.batch)
        }
        if let (waiter, batch) = resumed { waiter.resume(returning: batch) }
    }

    /// The next non-empty batch, waiting for one; `nil` once the mailbox is closed or the task cancelled.
    func next() async -> Batch? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Batch?, Never>) in
                let ready: Batch?? = state.withLock { state in
                    if state.isClosed { return .some(nil) }
                    if !state.batch.isEmpty {
                        defer { state.batch = Batch() }
                        return .some(state.batch)
                    }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            close()
        }
    }

    /// Ends the mailbox: a waiting ``next()`` returns `nil`, and later posts are ignored.
    func close() {
        let waiter = state.withLock { state in
            state.isClosed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
