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
    }

    private struct Subscriber {
        var userID: UUID
        var deviceID: UUID?
        var spaces: Set<UUID>
        var mailbox: StreamMailbox
    }

    private struct State {
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
        var byUser: [UUID: Set<Int>] = [:]
        var bySpace: [UUID: Set<Int>] = [:]
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
        let (total, mine) = state.withLock { ($0.subscribers.count, $0.byUser[userID]?.count ?? 0) }
        guard total < limits.maximumStreams else { throw .serverFull }
        guard mine < limits.maximumStreamsPerAccount else { throw .accountFull }
    }

    /// Registers a stream of `userID` (bound to `deviceID`) that hears about `spaces`.
    func open(userID: UUID, deviceID: UUID?, spaces: Set<UUID>) throws(Refusal) -> Slot {
        let mailbox = StreamMailbox()
        let id = try state.withLock { (state: inout State) throws(Refusal) -> Int in
            guard state.subscribers.count < limits.maximumStreams else { throw .serverFull }
            guard (state.byUser[userID]?.count ?? 0) < limits.maximumStreamsPerAccount else { throw .accountFull }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(userID: userID, deviceID: deviceID, spaces: spaces, mailbox: mailbox)
            state.byUser[userID, default: []].insert(id)
            for space in spaces { state.bySpace[space, default: []].insert(id) }
            return id
        }
        return Slot(id: id, mailbox: mailbox)
    }

    /// Replaces the spaces stream `id` hears about (after its account changed).
    func update(_ id: Int, spaces: Set<UUID>) {
        state.withLock { state in
            guard let old = state.subscribers[id]?.spaces else { return }
            for space in old.subtracting(spaces) { state.bySpace.remove(id, from: space) }
            for space in spaces.subtracting(old) { state.bySpace[space, default: []].insert(id) }
            state.subscribers[id]?.spaces = spaces
        }
    }

    /// Removes stream `id` and closes its mailbox.
    func close(_ id: Int) {
        let mailbox = state.withLock { state -> StreamMailbox? in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            state.byUser.remove(id, from: subscriber.userID)
            for space in subscriber.spaces { state.bySpace.remove(id, from: space) }
            return subscriber.mailbox
        }
        mailbox?.close()
    }

    /// Closes every stream (shutdown).
    func closeAll() {
        let ids = state.withLock { Array($0.subscribers.keys) }
        for id in ids { close(id) }
    }

    /// Posts `event` to the mailboxes of the streams it concerns, after applying it to the cached session contexts.
    func deliver(_ event: RealtimeEvent) {
        contexts?.apply(event)
        switch event {
        case .committed(let space, let seq, let origin):
            for mailbox in mailboxes(where: { $0.bySpace[space] }, excludingDevice: origin) { mailbox.post(space: space, seq: seq) }
        case .accountChanged(let user):
            for mailbox in mailboxes(where: { $0.byUser[user] }, excludingDevice: nil) { mailbox.postSync(recheck: true) }
        case .sessionsChanged, .keysChanged:
            break
        case .resync:
            for mailbox in mailboxes(where: { Set($0.subscribers.keys) }, excludingDevice: nil) { mailbox.postSync(recheck: true) }
        }
    }

    private func mailboxes(where ids: (State) -> Set<Int>?, excludingDevice device: UUID?) -> [StreamMailbox] {
        state.withLock { state in
            (ids(state) ?? []).compactMap { id in
                guard let subscriber = state.subscribers[id] else { return nil }
                if let device, subscriber.deviceID == device { return nil }
                return subscriber.mailbox
            }
        }
    }
}

extension Dictionary where Value == Set<Int> {
    /// Removes `id` from the set at `key`, and the key once its set is empty.
    fileprivate mutating func remove(_ id: Int, from key: Key) {
        self[key]?.remove(id)
        if self[key]?.isEmpty == true { removeValue(forKey: key) }
    }
}
