import Foundation
import Synchronization

/// What one open stream has still to send, coalesced: per space the highest announced sequence number (with the
/// messages carrying its changes while they follow on from one another), and whether a pull or a session check is
/// asked for. However many events arrive while the stream writes, it holds one entry per space and a few messages,
/// so a slow client costs memory bounded by its spaces, and no poke is dropped, only merged.
final class StreamMailbox: Sendable {
    /// A space's announcement: its sequence number, and the messages that carry every change up to it, in order
    /// (none: a plain poke, and the device pulls).
    struct Announcement: Sendable {
        var seq: Int64
        /// Empty once anything broke the chain (a message missed, a plain poke between): the device then pulls.
        var carried: [CarriedMessage] = []
    }

    /// The most carried messages a space's announcement holds; past them it becomes a plain poke.
    static let carriedLimit = 8

    /// The signals gathered since the stream last took them.
    struct Batch: Sendable {
        /// The announcement per space.
        var changes: [UUID: Announcement] = [:]
        /// Whether the device should pull whatever the pokes say (membership changed, a gap in the feed).
        var sync = false
        /// Whether the stream should check its session and reload its spaces first.
        var recheck = false

        var isEmpty: Bool { changes.isEmpty && !sync && !recheck }
    }

    /// Why a mailbox was closed: the first reason given is kept.
    enum Ending: Sendable {
        /// The client closed the connection.
        case clientLeft
        /// The stream's access token expired.
        case tokenExpired
        /// The hub closed it (the server shuts down), or the task reading it was cancelled.
        case closed
    }

    private struct State {
        var batch = Batch()
        var waiter: CheckedContinuation<Batch?, Never>?
        var ending: Ending?
        var isClosed: Bool { ending != nil }
    }

    private let state = Mutex(State())

    /// Adds a commit announcement, carrying its changes in `message` when they follow on from those it holds.
    func post(space: UUID, seq: Int64, carrying message: CarriedMessage? = nil) {
        deliver { batch in
            guard var announcement = batch.changes[space] else {
                batch.changes[space] = Announcement(seq: seq, carried: message.map { [$0] } ?? [])
                return
            }
            if let message, let last = announcement.carried.last, last.seq == message.after, announcement.carried.count < Self.carriedLimit {
                announcement.carried.append(message)
            } else {
                announcement.carried = []
            }
            announcement.seq = max(announcement.seq, seq)
            batch.changes[space] = announcement
        }
    }

    /// Drops what is queued for `spaces` (spaces the stream's account no longer has).
    func forget(_ spaces: Set<UUID>) {
        guard !spaces.isEmpty else { return }
        state.withLock { state in
            for space in spaces { state.batch.changes[space] = nil }
        }
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

    /// Why the mailbox was closed; `nil` while it is open.
    var ending: Ending? { state.withLock { $0.ending } }

    /// Ends the mailbox: a waiting ``next()`` returns `nil`, and later posts are ignored.
    func close(_ ending: Ending = .closed) {
        let waiter = state.withLock { state in
            if state.ending == nil { state.ending = ending }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
