import Foundation
import NIOCore
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
        /// Whether an announcement came while the hub counted the stream's spaces not current (a check failed): the
        /// stream checks again once its retry is due.
        var notCurrent = false

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
        var waker: StreamWaker?
        var ending: Ending?
        var isClosed: Bool { ending != nil }
    }

    private let state = Mutex(State())

    /// Adds a commit announcement, carrying its changes in `message` when they follow on from those it holds; the
    /// stream's reader is woken through `wakers` (``StreamWaker/wakeAll(_:)``), so one delivery to many streams hops
    /// once per event loop.
    func post(space: UUID, seq: Int64, carrying message: CarriedMessage? = nil, isCurrent: Bool = true, wakers: inout [StreamWaker]) {
        deliver(wakers: &wakers) { batch in
            if !isCurrent { batch.notCurrent = true }
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

    /// Adds a commit announcement and wakes the stream's reader at once.
    func post(space: UUID, seq: Int64, carrying message: CarriedMessage? = nil) {
        var wakers: [StreamWaker] = []
        post(space: space, seq: seq, carrying: message, wakers: &wakers)
        StreamWaker.wakeAll(wakers)
    }

    /// Drops what is queued for `spaces` (spaces the stream's account no longer has).
    func forget(_ spaces: Set<UUID>) {
        guard !spaces.isEmpty else { return }
        state.withLock { state in
            for space in spaces { state.batch.changes[space] = nil }
        }
    }

    /// Asks the device to pull, after a session check when `recheck`.
    func postSync(recheck: Bool, wakers: inout [StreamWaker]) {
        deliver(wakers: &wakers) { batch in
            batch.sync = true
            batch.recheck = batch.recheck || recheck
        }
    }

    /// Asks the device to pull, waking the stream's reader at once.
    func postSync(recheck: Bool) {
        var wakers: [StreamWaker] = []
        postSync(recheck: recheck, wakers: &wakers)
        StreamWaker.wakeAll(wakers)
    }

    private func deliver(wakers: inout [StreamWaker], _ change: (inout Batch) -> Void) {
        let waker: StreamWaker? = state.withLock { state in
            guard !state.isClosed else { return nil }
            change(&state.batch)
            defer { state.waker = nil }
            return state.waker
        }
        if let waker { wakers.append(waker) }
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

    /// The gathered batch, or the mailbox's ending; when there is neither, `wake` is called (once) as soon as there is.
    /// The stream's channel handler reads its mailbox this way, with no task.
    func take(orWhenReady wake: StreamWaker) -> Taken {
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
                    let taken = take(orWhenReady: StreamWaker(eventLoop: nil) { continuation.resume(returning: .waiting) })
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
        if let waker { StreamWaker.wakeAll([waker]) }
    }
}

/// Who reads a mailbox, woken when it has something: a closure run on `eventLoop` (the stream's connection's), or on
/// the posting thread when `nil`.
struct StreamWaker: Sendable {
    let eventLoop: (any EventLoop)?
    let wake: @Sendable () -> Void

    init(eventLoop: (any EventLoop)?, wake: @escaping @Sendable () -> Void) {
        self.eventLoop = eventLoop
        self.wake = wake
    }

    /// Posts to each of `recipients` with `post`, which notes the wakers of the streams that have something new, then
    /// wakes them (``wakeAll(_:)``).
    static func post<Recipients: Sequence>(to recipients: Recipients, _ post: (Recipients.Element, inout [StreamWaker]) -> Void) {
        var wakers: [StreamWaker] = []
        for recipient in recipients { post(recipient, &wakers) }
        wakeAll(wakers)
    }

    /// Runs every waker, one hop per event loop: a commit delivered to ten thousand streams on two loops is two
    /// hand-offs between threads, not ten thousand.
    static func wakeAll(_ wakers: [StreamWaker]) {
        guard wakers.count > 1 else {
            if let waker = wakers.first { waker.eventLoop?.execute(waker.wake) ?? waker.wake() }
            return
        }
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, wakes: [@Sendable () -> Void])] = [:]
        for waker in wakers {
            guard let loop = waker.eventLoop else {
                waker.wake()
                continue
            }
            byLoop[ObjectIdentifier(loop), default: (loop, [])].wakes.append(waker.wake)
        }
        for (loop, wakes) in byLoop.values {
            loop.execute { for wake in wakes { wake() } }
        }
    }
}
