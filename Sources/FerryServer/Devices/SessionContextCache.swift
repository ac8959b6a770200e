import FerryCore
import Foundation
import Synchronization

/// What a pull reads beside its token (its session, the session's device and the account's spaces), kept in memory,
/// so that a pull whose cursors are all current (most syncs: nothing changed) touches no database.
///
/// Kept current by the realtime events every instance hears (``RealtimeHub/deliver(_:)``): a commit moves its
/// space's latest sequence number here; an account's change (sign-out, revocation, membership, a device bound or
/// approved) drops its entries; a space's new key drops the entries that list it; a listener that reconnected
/// (events may have been lost) drops everything. While events cannot be heard (a PostgreSQL instance before its
/// listener connects, or after it lost it) nothing is cached. Entries live at most ``lifetime`` as a bound on any
/// change that no event announces.
///
/// Only the pull uses it, and the pull reads of the spaces their ids, sequence numbers, encryption and key versions:
/// roles and names (which some changes move without an event) are never read from here. Where the cache is unsure,
/// the pull reads the database: a cursor beyond a cached sequence number (a commit on another instance, not heard
/// yet) or a space the cached list lacks.
final class SessionContextCache: Sendable {
    /// A read of the database begun at a known generation: stored only if nothing was dropped meanwhile, so a context
    /// read before a sign-out cannot be cached after it.
    struct Ticket {
        fileprivate let generation: UInt64
    }

    private struct Entry {
        var context: SessionContext
        var expiresAt: ContinuousClock.Instant
    }

    private struct State {
        var isListening: Bool
        /// Moves on every drop; a read that began at another generation is not stored.
        var generation: UInt64 = 0
        var entries: [UUID: Entry] = [:]
        var sessionsByUser: [UUID: Set<UUID>] = [:]
        /// The latest sequence number heard per space, for every space with a commit since the last clear: a context
        /// read before a commit but stored after it still answers with the commit's number.
        var latestSeq: [UUID: Int64] = [:]
        /// Pulls answered from memory, and pulls that read the database while the cache was in use.
        var hits = 0, misses = 0

        mutating func dropAll() {
            generation &+= 1
            entries.removeAll()
            sessionsByUser.removeAll()
            latestSeq.removeAll()
        }

        mutating func drop(session: UUID) {
            guard let entry = entries.removeValue(forKey: session) else { return }
            let user = entry.context.session.userID
            sessionsByUser[user]?.remove(session)
            if sessionsByUser[user]?.isEmpty == true { sessionsByUser.removeValue(forKey: user) }
        }
    }

    /// How long an entry is used at most.
    let lifetime: Duration
    /// The most sessions held; past it, arbitrary entries make room. (A count, not bytes: an entry grows with its
    /// account's spaces, up to ``SyncLimits/maximumSpacesPerAccount``.)
    let capacity: Int
    /// With several instances (PostgreSQL), what proves that the events committed before a request have been heard.
    let fence: EventFence?
    private let state: Mutex<State>

    /// A cache whose entries live at most `lifetime`. `listening`: whether this instance hears every event already
    /// (one instance on SQLite); a PostgreSQL instance starts deaf and ``setListening(_:)`` says when it hears, and
    /// answers from memory only after `fence`.
    init(lifetime: Duration, capacity: Int, listening: Bool, fence: EventFence? = nil) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.fence = fence
        self.state = Mutex(State(isListening: listening))
    }

    /// The cached context of `session`, its spaces' sequence numbers brought up to the latest commits heard; `nil`
    /// when not cached, expired, or while events are not heard. With a fence, an entry is used only once every event
    /// committed before this call has been heard (another instance's sign-out, say), unless `deadline` passes first.
    func context(session: UUID, until deadline: ContinuousClock.Instant? = nil) async -> SessionContext? {
        if let fence {
            // Nothing held: a miss, without a fence. Held but not proven current: the database decides.
            let now = ContinuousClock.now
            guard state.withLock({ $0.entries[session].map { $0.expiresAt > now } ?? false }) else { return lookUp(session: session) }
            guard await fence.wait(until: deadline) else { return nil }
        }
        return lookUp(session: session)
    }

    private func lookUp(session: UUID) -> SessionContext? {
        let now = ContinuousClock.now
        return state.withLock { state -> SessionContext? in
            guard state.isListening else { return nil }
            guard let entry = state.entries[session], entry.expiresAt > now else {
                state.drop(session: session)
                state.misses += 1
                return nil
            }
            state.hits += 1
            var context = entry.context
            if var spaces = context.spaces {
                for index in spaces.indices {
                    if let latest = state.latestSeq[spaces[index].id], latest > spaces[index].seq { spaces[index].seq = latest }
                }
                context.spaces = spaces
            }
            return context
        }
    }

    /// Taken before reading a context from the database; `nil` while events are not heard (nothing may be stored).
    func ticket() -> Ticket? {
        state.withLock { $0.isListening ? Ticket(generation: $0.generation) : nil }
    }

    /// Stores a context read from the database (with its spaces) under `ticket`, unless something was dropped since.
    func store(_ context: SessionContext, ticket: Ticket) {
        guard context.spaces != nil else { return }
        let expiresAt = ContinuousClock.now + lifetime
        state.withLock { state in
            guard state.isListening, state.generation == ticket.generation else { return }
            let session = context.session.id
            state.drop(session: session)
            if state.entries.count >= capacity, let victim = state.entries.keys.first { state.drop(session: victim) }
            state.entries[session] = Entry(context: context, expiresAt: expiresAt)
            state.sessionsByUser[context.session.userID, default: []].insert(session)
        }
    }

    /// Notes that the device of `session` was marked seen at `date`, so the cached device does not ask again.
    func noteSeen(session: UUID, at date: Date) {
        state.withLock { state in
            guard let device = state.entries[session]?.context.device, device.lastSeenAt < date else { return }
            state.entries[session]?.context.device?.lastSeenAt = date
        }
    }

    /// Whether this instance hears every event from now on (its listener connected) or no longer does; either way
    /// everything cached so far goes, since events may have been missed in between.
    func setListening(_ listening: Bool) {
        state.withLock { state in
            state.dropAll()
            state.isListening = listening
        }
    }

    /// Applies an event heard by this instance (its own included).
    func apply(_ event: RealtimeEvent) {
        state.withLock { state in
            switch event {
            case .committed(let space, let seq, _):
                if let latest = state.latestSeq[space], latest >= seq { return }
                // A bound on spaces remembered: past it, forgetting them all (and every entry) is safe.
                if state.latestSeq.count >= 4 * capacity { state.dropAll() }
                state.latestSeq[space] = seq
            case .accountChanged(let user), .sessionsChanged(let user):
                state.generation &+= 1
                for session in state.sessionsByUser[user] ?? [] { state.drop(session: session) }
            case .keysChanged(let space):
                state.generation &+= 1
                let listing = state.entries.filter { $0.value.context.spaces?.contains { $0.id == space } == true }.keys
                for session in listing { state.drop(session: session) }
            case .resync:
                state.dropAll()
            }
        }
    }

    /// The sessions cached, and the lookups answered from memory and from the database so far.
    var statistics: (sessions: Int, hits: Int, misses: Int) { state.withLock { ($0.entries.count, $0.hits, $0.misses) } }
}
