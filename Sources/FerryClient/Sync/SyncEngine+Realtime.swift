import FerryCore
import Foundation
import Logging

/// The engine's realtime stream: open while the app is active and the network is up, pokes turned into the
/// coalesced sync, reconnection with backoff and jitter, and one sync after every (re)connection.
extension SyncEngine {
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
            // A stream that was open and closed for an ordinary reason reopens at once (a little jitter spreads a
            // server restart's reconnections); one that could not open, or whose session ended, backs off.
            let delay: Duration
            if wasReady, closure?.isSessionEnded != true {
                failures = 0
                delay = .milliseconds(Int64(random() * 250))
            } else {
                failures += 1
                delay = configuration.realtimeBackoff.delay(afterAttempt: failures, random: random())
            }
            if case .failure(let error) = result {
                logger.debug("realtime stream failed", metadata: ["ferry.error": "\(error)", "ferry.sync.attempt": "\(failures)"])
            }
            publishRealtime(isStreamWanted ? .disconnected : .off)
            await sleepUnlessWoken(delay)
        }
        publishRealtime(.off)
    }

    /// One message of the open stream.
    func streamReceived(_ message: StreamMessage) {
        switch message {
        case .ready:
            isStreamReady = true
            publishRealtime(.connected)
            trigger(.realtimeSync)  // whatever happened while the stream was closed
        case .change(let space, let seq):
            trigger(.realtimePoke(space: space, seq: seq))
        case .sync:
            trigger(.realtimeSync)
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
