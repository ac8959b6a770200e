import FerryCore
import Foundation
import Logging

/// The engine's realtime stream: open while the app is active and the network is up, pokes turned into the
/// coalesced sync, reconnection with backoff and jitter, and one sync after every (re)connection.
extension SyncEngine {
    /// The longest wait before reconnecting to a server that closed the stream as it shut down.
    static let streamRestartSpread: Duration = .seconds(2)

    /// Whether the stream should be open now.
    var isStreamWanted: Bool { isActive && isConnected != false }

    /// Keeps the stream open while wanted, until the engine stops.
    func maintainStream(_ realtime: any RealtimeRemote) async {
        var failures = 0
        while !Task.isCancelled {
            guard isStreamWanted else {
                publishRealtime(.off)
                await waitForStreamWake()
                continue
            }
            publishRealtime(.connecting)
            isStreamReady = false
            let connection = Task { try await realtime.openStream { message in await self.streamReceived(message) } }
            streamConnection = connection
            let result = await withTaskCancellationHandler { await connection.result } onCancel: { connection.cancel() }
            streamConnection = nil
            if Task.isCancelled { break }
            let wasReady = isStreamReady
            isStreamReady = false
            let closure = try? result.get()
            // A stream that was open and closed for an ordinary reason reopens at once, with a little jitter; one
            // whose server shut down waits up to ``streamRestartSpread`` (the instance's every device comes back);
            // one that could not open, or whose session ended, backs off, and never sooner than the server's
            // Retry-After (up to twice it, so a refused storm does not come back together).
            let delay: Duration
            if wasReady, closure?.isSessionEnded != true {
                failures = 0
                delay = (closure?.isServerGoingAway == true ? Self.streamRestartSpread : .milliseconds(250)) * random()
            } else {
                failures += 1
                let backoff = configuration.realtimeBackoff.delay(afterAttempt: failures, random: random())
                var retryAfter = Duration.zero
                if case .failure(let error) = result, let refusal = error as? RemoteError { retryAfter = refusal.retryAfter ?? .zero }
                delay = max(backoff, retryAfter * (1 + random()))
            }
            if case .failure(let error) = result {
                logger.debug("realtime stream failed", metadata: ["ferry.error": "\(error)", "ferry.sync.attempt": "\(failures)"])
            }
            publishRealtime(isStreamWanted ? .disconnected : .off)
            await sleepUnlessWoken(delay)
        }
        publishRealtime(.off)
    }

    /// One message of the open stream. Messages are handled one at a time, in order, so carried changes apply in the
    /// order the server sent them.
    func streamReceived(_ message: StreamMessage) async {
        switch message {
        case .ready:
            isStreamReady = true
            publishRealtime(.connected)
            trigger(.realtimeSync)  // whatever happened while the stream was closed
        case .change(let space, let seq, let carried):
            if let carried, await applyCarried(carried, space: space) { return }
            trigger(.realtimePoke(space: space, seq: seq))
        case .sync:
            trigger(.realtimeSync)
        }
    }

    /// Applies the changes a poke carried, without a sync, when the space's cursor meets their start; `false` when the
    /// device must pull instead (a gap, a key it lacks, a schema it must follow, a suspended store).
    private func applyCarried(_ carried: CarriedChanges, space: UUID) async -> Bool {
        guard !isSuspended else { return false }
        do {
            guard let report = try await makePass().applyCarried(carried, space: space) else { return false }
            guard report.pulled > 0, let finished = report.finishedAt else { return true }  // held already
            lastStreamedReport = report
            broadcast.update { $0.lastStreamedAt = finished }
            return true
        } catch {
            logger.debug("carried changes not applied; pulling", metadata: ["ferry.error": "\(error)"])
            return false
        }
    }

    /// Closes the stream when it is no longer wanted, and wakes the loop to reopen it when it is.
    func streamConditionsChanged() {
        if !isStreamWanted { streamConnection?.cancel() }
        wakeStream()
    }

    func publishRealtime(_ state: RealtimeState) {
        broadcast.update { $0.realtime = state }
    }

    private func sleepUnlessWoken(_ delay: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.sleeper.sleep(for: delay) }
            group.addTask { await self.waitForStreamWake() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForStreamWake() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                streamWake?.resume()
                streamWake = continuation
            }
        } onCancel: {
            Task { await self.wakeStream() }
        }
    }

    private func wakeStream() {
        streamWake?.resume()
        streamWake = nil
    }
}
