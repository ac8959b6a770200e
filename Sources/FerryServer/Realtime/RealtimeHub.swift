import FerryCore
import Foundation
import Synchronization

/// The streams open on this instance, indexed by account and by space, and the fan-out of events to them.
///
/// Delivering is synchronous and touches only the streams concerned: a commit in a space reaches the streams whose
/// account is a member of it (each stream knows its spaces, reloaded whenever its account changes), except those of
/// the device that pushed.
final class RealtimeHub: Sendable {
    /// A stream's slot: its id, to close it, and its mailbox.
    struct Slot: Sendable {
        let id: Int
        let mailbox: StreamMailbox
    }

    /// Why a stream was not opened.
    enum Refusal: Error, Equatable {
        /// The instance holds ``RealtimeLimits/maximumStreams`` already.
        case serverFull
        /// The account holds ``RealtimeLimits/maximumStreamsPerAccount`` already.
        case accountFull
        /// The server is shutting down (``closeAll()``).
        case closing
    }

    private struct Subscriber {
        var userID: UUID
        var deviceID: UUID?
        var spaces: Set<UUID>
        var mailbox: StreamMailbox
        /// Whether its spaces are known current: from an account change until the stream has checked its session and
        /// reloaded its spaces, it is sent plain pokes, which carry no data, and its device's pull decides.
        var isCurrent = true
        /// Counts the account changes heard, so that spaces read before the last of them do not count as current.
        var changes = 0
    }

    /// What was announced in a space with open streams, and the read of the changes to carry next.
    private struct SpaceFeed {
        /// The sequence number the space's streams were last told of (or that they read when they opened).
        var announced: Int64
        /// The highest committed sequence number heard.
        var committed: Int64
        /// Where the next read starts: the last change carried, or the last plain poke's number.
        var readFrom: Int64
        var isReading = false
    }

    private struct State {
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
        var byUser: [UUID: Set<Int>] = [:]
        var bySpace: [UUID: Set<Int>] = [:]
        var feeds: [UUID: SpaceFeed] = [:]
        var reader: CarriedChangeReader?
        var readsInFlight = 0
        var isClosed = false

        /// Adds stream `id` to `space`, whose last commit was `seq` when the stream read its spaces.
        mutating func subscribe(_ id: Int, to space: UUID, seq: Int64) {
            bySpace[space, default: []].insert(id)
            // A feed that exists knows better: commits may have been announced since that read.
            if feeds[space] == nil { feeds[space] = SpaceFeed(announced: seq, committed: seq, readFrom: seq) }
        }

        mutating func unsubscribe(_ id: Int, from space: UUID) {
            bySpace.remove(id, from: space)
            if bySpace[space] == nil, feeds[space]?.isReading == false { feeds[space] = nil }
        }

        /// Marks stream `id`'s spaces as no longer known current; returns its mailbox.
        mutating func accountChanged(_ id: Int) -> StreamMailbox? {
            subscribers[id]?.isCurrent = false
            subscribers[id]?.changes += 1
            return subscribers[id]?.mailbox
        }

        /// The mailboxes of streams `ids`, except those of `device`, and whether each stream's spaces are current.
        func recipients(_ ids: Set<Int>?, excludingDevice device: UUID?) -> [(mailbox: StreamMailbox, isCurrent: Bool)] {
            (ids ?? []).compactMap { id in
                guard let subscriber = subscribers[id] else { return nil }
                if let device, subscriber.deviceID == device { return nil }
                return (subscriber.mailbox, subscriber.isCurrent)
            }
        }

        /// The next read to announce `space`'s commits: from where the last one ended, through the last commit heard.
        /// `nil`, ending the reads, once everything is announced; a space whose streams all closed meanwhile is
        /// forgotten then.
        mutating func takeWork(_ space: UUID) -> (after: Int64, through: Int64)? {
            guard let feed = feeds[space], feed.committed > feed.announced else {
                readsInFlight -= 1
                feeds[space]?.isReading = false
                if bySpace[space] == nil { feeds[space] = nil }
                return nil
            }
            return (feed.readFrom, feed.committed)
        }

        /// Records what a read announced: through `through` at least, and the next read starts after the changes it
        /// carried (or at `through`, after a plain poke).
        mutating func announced(_ space: UUID, through: Int64, carried message: CarriedMessage?) {
            guard var feed = feeds[space] else { return }
            feed.announced = max(feed.announced, through, message?.seq ?? 0)
            feed.readFrom = max(feed.readFrom, message?.seq ?? through)
            feeds[space] = feed
        }
    }

    let limits: RealtimeLimits
    /// The pulls' session contexts, kept current by the same events.
    let contexts: SessionContextCache?
    private let state = Mutex(State())

    init(limits: RealtimeLimits, contexts: SessionContextCache? = nil) {
        self.limits = limits
        self.contexts = contexts
    }

    /// The number of open streams.
    var count: Int { state.withLock { $0.subscribers.count } }

    /// Whether one more stream of `userID` fits; checked before the upgrade, and again by ``open(userID:deviceID:spaces:)``.
    func admits(userID: UUID) throws(Refusal) {
        let (isClosed, total, mine) = state.withLock { ($0.isClosed, $0.subscribers.count, $0.byUser[userID]?.count ?? 0) }
        guard !isClosed else { throw .closing }
        guard total < limits.maximumStreams else { throw .serverFull }
        guard mine < limits.maximumStreamsPerAccount else { throw .accountFull }
    }

    /// Counts the account changes (and resyncs) this hub has heard. A stream request notes it before it is
    /// authenticated (``StreamAdmission/Mark``); a stream whose request started before the latest change opens not
    /// current, since that change may have been its own account's, heard before the stream was registered to hear it.
    /// Per hub, not per process: another server's changes (as in tests, many servers to a process) say nothing of this
    /// one's streams.
    let accountChangesHeard = Atomic<Int>(0)

    /// Stream requests being admitted now (``RealtimeLimits/maximumOpeningStreams``).
    private let openings = Atomic<Int>(0)

    /// Counts one more stream request being admitted; `false` (counting nothing) when as many are already.
    func beginOpening() -> Bool {
        let now = openings.add(1, ordering: .relaxed).newValue
        guard now <= limits.maximumOpeningStreams else {
            openings.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Ends what ``beginOpening()`` counted.
    func endOpening() {
        openings.subtract(1, ordering: .relaxed)
    }

    /// Carries commits' changes in pokes from now on, read by `reader`.
    func carryChanges(with reader: CarriedChangeReader) {
        state.withLock { $0.reader = reader }
    }

    /// Registers a stream of `userID` (bound to `deviceID`) that hears about `spaces`, each with its last commit's
    /// sequence number as the stream read it, for a request that started when ``accountChangesHeard`` was
    /// `changesAtStart`. If an account change came since, the stream opens not current and checks its session first.
    func open(userID: UUID, deviceID: UUID?, spaces: [UUID: Int64], changesAtStart: Int? = nil) throws(Refusal) -> Slot {
        let mailbox = StreamMailbox()
        let (id, isCurrent) = try state.withLock { (state: inout State) throws(Refusal) -> (Int, Bool) in
            guard !state.isClosed else { throw .closing }
            guard state.subscribers.count < limits.maximumStreams else { throw .serverFull }
            guard (state.byUser[userID]?.count ?? 0) < limits.maximumStreamsPerAccount else { throw .accountFull }
            let id = state.nextID
            state.nextID += 1
            var subscriber = Subscriber(userID: userID, deviceID: deviceID, spaces: Set(spaces.keys), mailbox: mailbox)
            subscriber.isCurrent = changesAtStart.map { $0 == accountChangesHeard.load(ordering: .sequentiallyConsistent) } ?? true
            state.subscribers[id] = subscriber
            state.byUser[userID, default: []].insert(id)
            for (space, seq) in spaces { state.subscribe(id, to: space, seq: seq) }
            return (id, subscriber.isCurrent)
        }
        if !isCurrent { mailbox.postSync(recheck: true) }
        return Slot(id: id, mailbox: mailbox)
    }

    /// Whether stream `id`'s spaces are known current (its pokes carry changes).
    func isCurrent(_ id: Int) -> Bool {
        state.withLock { $0.subscribers[id]?.isCurrent ?? false }
    }

    /// The account changes stream `id` has heard of; pass it to ``update(_:spaces:readAfter:)`` with the spaces read
    /// after asking.
    func accountChanges(of id: Int) -> Int {
        state.withLock { $0.subscribers[id]?.changes ?? 0 }
    }

    /// Replaces the spaces stream `id` hears about (after its account changed and its session was checked again),
    /// read once it had heard of `changes` account changes: its pokes carry changes again unless another came since.
    func update(_ id: Int, spaces: [UUID: Int64], readAfter changes: Int) {
        let lost = state.withLock { state -> (StreamMailbox, Set<UUID>)? in
            guard let subscriber = state.subscribers[id] else { return nil }
            let new = Set(spaces.keys)
            let lost = subscriber.spaces.subtracting(new)
            for space in lost { state.unsubscribe(id, from: space) }
            for space in new.subtracting(subscriber.spaces) { state.subscribe(id, to: space, seq: spaces[space] ?? 0) }
            state.subscribers[id]?.spaces = new
            state.subscribers[id]?.isCurrent = subscriber.changes == changes
            return (subscriber.mailbox, lost)
        }
        // What was queued for a lost space while the check ran goes unsent.
        if let (mailbox, spaces) = lost { mailbox.forget(spaces) }
    }

    /// Removes stream `id` and closes its mailbox.
    func close(_ id: Int) {
        let mailbox = state.withLock { state -> StreamMailbox? in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            state.byUser.remove(id, from: subscriber.userID)
            for space in subscriber.spaces { state.unsubscribe(id, from: space) }
            return subscriber.mailbox
        }
        mailbox?.close()
    }

    /// Ends every stream and opens none from now on (shutdown). Each stays counted until its service has written
    /// its close frame and called ``close(_:)``.
    func closeAll() {
        let mailboxes = state.withLock { state in
            state.isClosed = true
            return state.subscribers.values.map(\.mailbox)
        }
        for mailbox in mailboxes { mailbox.close() }
    }

    /// Waits until every stream has been closed (``close(_:)``), at most `limit`.
    func waitUntilEmpty(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while count > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Posts `event` to the mailboxes of the streams it concerns, after applying it to the cached session contexts.
    func deliver(_ event: RealtimeEvent) {
        contexts?.apply(event)
        switch event {
        case .committed(let space, let seq, let origin):
            announce(space, seq: seq, origin: origin)
        case .accountChanged(let user):
            recheck { state in Array(state.byUser[user] ?? []) }
        case .sessionsChanged, .keysChanged:
            break
        case .resync:
            recheck { state in Array(state.subscribers.keys) }
        }
    }

    /// The streams `ids` chooses check their session and reload their spaces before they write anything more, as after
    /// a change to their account.
    private func recheck(_ ids: (State) -> [Int]) {
        accountChangesHeard.add(1, ordering: .sequentiallyConsistent)
        let mailboxes = state.withLock { state in ids(state).compactMap { state.accountChanged($0) } }
        StreamWaker.post(to: mailboxes) { mailbox, wakers in mailbox.postSync(recheck: true, wakers: &wakers) }
    }

    /// Reads of changes to carry running at once (one per space at most); past it commits are plain pokes.
    static let maximumReads = 16

    /// Announces a commit to the space's streams: with its changes when they can be carried (read once, after the
    /// commit, for every stream), otherwise as a plain poke. Commits heard while a read runs are announced by the
    /// next one, together. A carried announcement goes to the device that pushed too: the read may hold other
    /// devices' commits it has not heard of yet (whose own events then come too late to announce them again).
    private func announce(_ space: UUID, seq: Int64, origin: UUID?) {
        enum Next { case poke, none, read(CarriedChangeReader) }
        let next = state.withLock { state -> Next in
            guard let reader = state.reader, var feed = state.feeds[space] else { return .poke }
            guard seq > feed.announced else { return .none }  // heard again, or read with a later commit
            feed.committed = max(feed.committed, seq)
            if feed.isReading {
                state.feeds[space] = feed
                return .none
            }
            guard state.readsInFlight < Self.maximumReads else { return .poke }
            feed.isReading = true
            state.feeds[space] = feed
            state.readsInFlight += 1
            return .read(reader)
        }
        switch next {
        case .poke:
            StreamWaker.post(to: recipients(where: { $0.bySpace[space] }, excludingDevice: origin)) { recipient, wakers in
                recipient.mailbox.post(space: space, seq: seq, isCurrent: recipient.isCurrent, wakers: &wakers)
            }
        case .none:
            break
        case .read(let reader):
            Task { await carry(space, reader: reader) }
        }
    }

    /// Reads and announces the space's commits until none is left unannounced.
    private func carry(_ space: UUID, reader: CarriedChangeReader) async {
        while let (after, through) = state.withLock({ state in state.takeWork(space) }) {
            let message = await reader.message(space: space, after: after)
            let seq = max(through, message?.seq ?? 0)
            let mailboxes = state.withLock { state in
                state.announced(space, through: through, carried: message)
                return state.recipients(state.bySpace[space], excludingDevice: nil)
            }
            StreamWaker.post(to: mailboxes) { recipient, wakers in
                recipient.mailbox.post(space: space, seq: seq, carrying: recipient.isCurrent ? message : nil, isCurrent: recipient.isCurrent, wakers: &wakers)
            }
        }
    }

    private func recipients(where ids: (State) -> Set<Int>?, excludingDevice device: UUID?) -> [(mailbox: StreamMailbox, isCurrent: Bool)] {
        state.withLock { state in state.recipients(ids(state), excludingDevice: device) }
    }
}

extension Dictionary where Value == Set<Int> {
    /// Removes `id` from the set at `key`, and the key once its set is empty.
    fileprivate mutating func remove(_ id: Int, from key: Key) {
        self[key]?.remove(id)
        if self[key]?.isEmpty == true { removeValue(forKey: key) }
    }
}
