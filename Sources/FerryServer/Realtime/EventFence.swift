import FerryCore
import Foundation
import Synchronization

/// Proves that this instance has heard every event committed before a moment, so that what it holds in memory
/// (``SessionContextCache``) may answer a request that arrived after another instance's sign-out or revocation.
///
/// On PostgreSQL, events travel through `NOTIFY`, which PostgreSQL delivers to each listener in commit order. A fence
/// is a notification of this instance's own (`f <instance> <n>`) on the same channel: once the listener hears it,
/// it has applied every event committed before it was sent, so every event committed before the request that waited
/// for it. Requests that wait while a fence is on its way share the next one, so under load one fence serves many.
/// One round trip to PostgreSQL that reads no table, instead of a read of the session, device and spaces.
final class EventFence: Sendable {
    private struct State {
        var isListening = false
        /// The last fence is overdue: the listener may only be slow, but until it hears it, no pull waits for a fence.
        var isSlow = false
        /// The last fence sent (or being sent), and whether another is wanted after it.
        var sent: UInt64 = 0
        var wanted = false
        /// The last fence of this instance heard back.
        var heard: UInt64 = 0
        /// Waiters by the fence number that releases them.
        var waiters: [UInt64: [Int: CheckedContinuation<Bool, Never>]] = [:]
        var nextWaiter = 0
    }

    /// How long pulls wait for a fence before reading the database instead.
    static let timeout = Duration.seconds(2)

    /// This instance's name in fence notifications.
    let instance = UUID().lowercasedText
    private let state = Mutex(State())
    private let requests: AsyncStream<Void>.Continuation
    /// Signals that a fence is wanted; the listener's connection sends it (``nextFence()``).
    let wanted: AsyncStream<Void>

    init() {
        (wanted, requests) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Waits until this instance has heard every event committed before the call; `false` when it cannot tell (no
    /// listener, `deadline` passed, or the wait was cancelled), and the caller reads the database instead.
    ///
    /// The deadline is a timer entry (``TimeoutTimer``), not a task racing the wait: a request answered from memory
    /// on PostgreSQL waits here, bounded, with no task of its own.
    func wait(until deadline: ContinuousClock.Instant? = nil) async -> Bool {
        await wait(for: nil, until: deadline)
    }

    /// Waits until fence `number` is heard (the listener's watchdog in ``PostgresRealtimeFeed``), or, with `nil`, the
    /// next fence sent after the call, asking for one; `false` once `deadline` passes.
    func wait(for number: UInt64?, until deadline: ContinuousClock.Instant? = nil) async -> Bool {
        enum Step { case refuse, heard, ask, wait }
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        // A timer that fires before the waiter is registered finds nothing to release; the registration then sees
        // the deadline passed and refuses.
        let timer = deadline.map { deadline in TimeoutTimer.shared.schedule(deadline: { deadline }) { self.release(waiter: id) } }
        defer { if let timer { TimeoutTimer.shared.cancel(timer) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let step = state.withLock { state -> Step in
                    guard state.isListening, !Task.isCancelled else { return .refuse }
                    if let deadline, ContinuousClock.now >= deadline { return .refuse }
                    if let number {
                        if number <= state.heard { return .heard }
                        state.waiters[number, default: [:]][id] = continuation
                        return .wait
                    }
                    if state.isSlow { return .refuse }
                    // A fence already sent may have committed before this request arrived: only the next one proves.
                    state.waiters[state.sent + 1, default: [:]][id] = continuation
                    defer { state.wanted = true }
                    return state.wanted ? .wait : .ask
                }
                switch step {
                case .refuse: continuation.resume(returning: false)
                case .heard: continuation.resume(returning: true)
                case .ask: requests.yield()
                case .wait: break
                }
            }
        } onCancel: {
            release(waiter: id)
        }
    }

    /// Tells waiter `id`, if it still waits, that it cannot tell (cancelled, or its deadline passed).
    private func release(waiter id: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            for key in state.waiters.keys {
                if let found = state.waiters[key]?.removeValue(forKey: id) { return found }
            }
            return nil
        }
        continuation?.resume(returning: false)
    }

    /// The payload of the next fence to send, when one is wanted; called by the listener's connection.
    func nextFence() -> String? {
        state.withLock { state -> String? in
            guard state.wanted else { return nil }
            state.wanted = false
            state.sent += 1
            return "f \(instance) \(state.sent)"
        }
    }

    /// The number of the last fence handed out by ``nextFence()``.
    var lastSent: UInt64 { state.withLock { $0.sent } }

    /// Applies a notification line; `true` when it was a fence (of any instance), which carries no event.
    func heard(_ line: Substring) -> Bool {
        guard line.hasPrefix("f ") else { return false }
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[1] == instance, let number = UInt64(parts[2]) else { return true }
        let released = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.heard = max(state.heard, number)
            let done = state.waiters.keys.filter { $0 <= number }
            return done.flatMap { state.waiters.removeValue(forKey: $0).map { Array($0.values) } ?? [] }
        }
        for continuation in released { continuation.resume(returning: true) }
        return true
    }

    /// Whether the listener hears events; when it stops, every waiter is told it cannot tell.
    func setListening(_ listening: Bool) {
        releaseAll(listening: listening)
    }

    /// A fence could not be sent: its waiters are told they cannot tell (they read the database).
    func sendFailed() {
        releaseAll(listening: nil)
    }

    /// A fence is overdue (`true`): every pull waiting reads the database, and so does every pull until the watchdog
    /// hears the fence after all (`false`), instead of waiting for a listener that may be dead.
    func setSlow(_ slow: Bool) {
        state.withLock { $0.isSlow = slow }
        if slow { releaseAll(listening: nil) }
    }

    private func releaseAll(listening: Bool?) {
        let released = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            if let listening { state.isListening = listening }
            guard listening != true else { return [] }
            state.wanted = false
            defer { state.waiters.removeAll() }
            return state.waiters.values.flatMap(\.values)
        }
        for continuation in released { continuation.resume(returning: false) }
    }
}
