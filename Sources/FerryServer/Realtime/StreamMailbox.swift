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
        /// Who is told once there is something to take: set by a ``take(orWhenReady:)`` that found nothing, called once.
        var waker: (@Sendable () -> Void)?
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
        let waker: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            change(&state.batch)
            defer { state.waker = nil }
            return state.waker
        }
        waker?()
    }

    /// What ``take(orWhenReady:)`` found.
    enum Taken: Sendable {
        /// The signals gathered since the last take.
        case batch(Batch)
        /// The mailbox is closed, for this reason.
        case ended(Ending)
        /// Nothing yet: the waker will be called once there is.
        case waiting
    }

    /// The gathered batch, or the mailbox's ending; when there is neither, `wake` is called (once, on the thread that
    /// posts or closes) as soon as there is. The stream's channel handler reads its mailbox this way, with no task.
    func take(orWhenReady wake: @escaping @Sendable () -> Void) -> Taken {
        state.withLock { state in
            if let ending = state.ending { return .ended(ending) }
            if !state.batch.isEmpty {
                defer { state.batch = Batch() }
                return .batch(state.batch)
            }
            state.waker = wake
            return .waiting
        }
    }

    /// The next non-empty batch, waiting for one; `nil` once the mailbox is closed (closing it if the task is cancelled).
    func next() async -> Batch? {
        await withTaskCancellationHandler {
            while true {
                let taken: Taken = await withCheckedContinuation { continuation in
                    let taken = take(orWhenReady: { continuation.resume(returning: .waiting) })
                    if case .waiting = taken { return }
                    continuation.resume(returning: taken)
                }
                switch taken {
                case .batch(let batch): return batch
                case .ended: return nil
                case .waiting: continue
                }
            }
        } onCancel: {
            close()
        }
    }

    /// Why the mailbox was closed; `nil` while it is open.
    var ending: Ending? { state.withLock { $0.ending } }

    /// Ends the mailbox: its reader is told (a waiting ``next()`` returns `nil`), and later posts are ignored.
    func close(_ ending: Ending = .closed) {
        let waker = state.withLock { state in
            if state.ending == nil { state.ending = ending }
            defer { state.waker = nil }
            return state.waker
        }
        waker?()
    }
}
