import FerryClient
import FerryCore
import Foundation
import Synchronization

/// A server in memory for the engine's tests: counts requests, can hold a pull until released, can fail.
final class FakeSyncRemote: SyncRemote {
    struct State {
        var pushes: [PushRequest] = []
        var pulls: [PullRequest] = []
        var pullsStarted = 0
        var failuresLeft = 0
        var failure: RemoteError = RemoteError(code: .networkUnavailable, message: "The server could not be reached.")
        var holdPulls = false
        var held: [CheckedContinuation<Void, Never>] = []
        var pullWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var reply = PullResponse(changes: [], cursors: [:], hasMore: false)
        /// Replies served before `reply`, first first.
        var queuedReplies: [PullResponse] = []
        /// Pushes with more mutations than this answer 413.
        var maximumPushCount: Int?
        /// Mutation ids the server rejects.
        var rejectedIDs: Set<Int64> = []
        /// Pushes answer 200 with no result for any mutation (a broken server or proxy).
        var answersNoResults = false
        /// What replies say in ``PushResponse/maxInFlight``; `nil` for a server that takes one push at a time.
        var maxInFlight: Int?
        /// How long each push takes, so that pushes sent together overlap.
        var pushDuration: Duration?
        /// Once a push has been answered, pushes wait (10 s at most) until this many are on the wire at once, then
        /// none waits again: a test sees whether the device fills its window, however slowly this machine reads the
        /// outbox.
        var pushesHeldUntilOnTheWire: Int?
        /// Whether ``pushesHeldUntilOnTheWire`` were on the wire at once.
        var windowFilled = false
        /// Pushes sent so far, and the next one to arrive: pushes arrive in the order they were sent, not as their
        /// tasks wake, so a test sees the same arrivals on every run (``overtakingPushes`` makes one arrive early).
        var pushesSent = 0
        var nextArrival = 1
        /// The 1-based numbers of pushes that fail as ``failure`` before reaching the server.
        var failingPushes: Set<Int> = []
        /// The 1-based numbers of pushes refused `409 push_out_of_order` even in order, as if they arrived first.
        var overtakingPushes: Set<Int> = []
        /// The last mutation id processed, which a push's `follows` must name (as the server checks).
        var lastProcessed: Int64 = 0
        var pushesOnTheWire = 0
        var mostPushesOnTheWire = 0
        var schemaRequests = 0
        var createdSpaces: [CreateSpaceRequest] = []
        /// What creating a space answers instead of creating it, when set.
        var spaceRefusal: RemoteError?
    }

    let state = Mutex(State())
    let schemaValue: Schema

    init(schema: Schema = .empty) {
        schemaValue = schema
    }

    var pullCount: Int { state.withLock { $0.pulls.count } }
    var pushCount: Int { state.withLock { $0.pushes.count } }
    var pullsStarted: Int { state.withLock { $0.pullsStarted } }

    func push(_ request: PushRequest) async throws -> PushResponse {
        let (sent, duration) = state.withLock { state in
            state.pushesOnTheWire += 1
            state.mostPushesOnTheWire = max(state.mostPushesOnTheWire, state.pushesOnTheWire)
            state.pushesSent += 1
            return (state.pushesSent, state.pushDuration)
        }
        if let duration { try? await Task.sleep(for: duration) }
        await holdUntilArrival(sent: sent)
        return try state.withLock { state in
            state.pushesOnTheWire -= 1
            state.nextArrival = max(state.nextArrival, sent + 1)
            let number = state.pushes.count + 1
            state.pushes.append(request)
            if state.failingPushes.contains(number) { throw state.failure }
            if let follows = request.follows, follows != state.lastProcessed || state.overtakingPushes.contains(number) {
                throw RemoteError(code: .pushOutOfOrder, message: "The push it follows has not committed.", status: 409)
            }
            if let maximum = state.maximumPushCount, request.mutations.count > maximum {
                throw RemoteError(code: .payloadTooLarge, message: "The request body is too large.", status: 413)
            }
            if state.answersNoResults { return PushResponse(results: [], lastMutationId: 0) }
            let results = request.mutations.map { mutation in
                state.rejectedIDs.contains(mutation.mutationId)
                    ? MutationResult(mutationId: mutation.mutationId, status: .rejected, code: "unknown_field", message: "No such field.")
                    : MutationResult(mutationId: mutation.mutationId, status: .applied)
            }
            state.lastProcessed = max(state.lastProcessed, request.mutations.last?.mutationId ?? 0)
            return PushResponse(results: results, lastMutationId: state.lastProcessed, maxInFlight: state.maxInFlight)
        }
    }

    /// Waits until the pushes sent before this one have arrived and, with ``State/pushesHeldUntilOnTheWire``, until
    /// the window has filled once.
    private func holdUntilArrival(sent: Int) async {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !Task.isCancelled {
            let waits = state.withLock { state in
                if let target = state.pushesHeldUntilOnTheWire, !state.pushes.isEmpty, state.pushesOnTheWire >= target {
                    state.windowFilled = true
                }
                let held = state.pushesHeldUntilOnTheWire != nil && !state.pushes.isEmpty && !state.windowFilled
                return held || state.nextArrival < sent
            }
            guard waits else { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        let (hold, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.pullsStarted += 1
            let count = state.pullsStarted
            let ready = state.pullWatchers.filter { $0.count <= count }.map(\.continuation)
            state.pullWatchers.removeAll { $0.count <= count }
            return (state.holdPulls, ready)
        }
        for watcher in ready { watcher.resume() }
        if hold {
            await withCheckedContinuation { continuation in
                state.withLock { $0.held.append(continuation) }
            }
        }
        return try state.withLock { state in
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw state.failure
            }
            state.pulls.append(request)
            if !state.queuedReplies.isEmpty { return state.queuedReplies.removeFirst() }
            return state.reply
        }
    }

    func createSpace(_ request: CreateSpaceRequest) async throws -> SpaceSummary {
        if let refusal = state.withLock({ $0.spaceRefusal }) { throw refusal }
        state.withLock { $0.createdSpaces.append(request) }
        return SpaceSummary(id: request.id ?? UUID(), name: request.name, isPersonal: false, isEncrypted: false, role: .owner, seq: 0)
    }

    func schema() async throws -> Schema {
        state.withLock { $0.schemaRequests += 1 }
        return schemaValue
    }

    /// Makes the next pulls wait until ``releasePulls()``.
    func holdPulls() {
        state.withLock { $0.holdPulls = true }
    }

    func releasePulls() {
        let held = state.withLock { state in
            state.holdPulls = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    func failNextPulls(_ count: Int) {
        state.withLock { $0.failuresLeft = count }
    }

    /// Returns once `count` pulls have started (counting held ones).
    func waitForPullsStarted(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isReady = state.withLock { state in
                if state.pullsStarted >= count { return true }
                state.pullWatchers.append((count, continuation))
                return false
            }
            if isReady { continuation.resume() }
        }
    }
}
