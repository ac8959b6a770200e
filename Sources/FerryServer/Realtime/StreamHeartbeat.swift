import NIOCore
import Synchronization

/// Pings every open stream of an event loop in one round per period: one timer per event loop, not one per stream.
///
/// A stream that has not answered the previous round's ping by the next round is disconnected
/// (``StreamChannelHandler/beat()``): a dead network path ends its stream within two periods.
final class StreamHeartbeat: Sendable {
    let period: TimeAmount
    private let rounds = Mutex<[ObjectIdentifier: Round]>([:])

    init(period: TimeAmount) {
        self.period = period
    }

    /// Adds `stream`, served on `loop`, to that loop's round; call on `loop`.
    func join(_ stream: StreamChannelHandler, on loop: any EventLoop) {
        round(of: loop).value.add(stream)
    }

    /// Removes `stream` from `loop`'s round; call on `loop`.
    func leave(_ stream: StreamChannelHandler, on loop: any EventLoop) {
        round(of: loop).value.remove(stream)
    }

    private func round(of loop: any EventLoop) -> NIOLoopBound<Round> {
        let round = rounds.withLock { rounds in
            if let round = rounds[ObjectIdentifier(loop)] { return round }
            let round = Round(period: period)
            rounds[ObjectIdentifier(loop)] = round
            return round
        }
        return NIOLoopBound(round, eventLoop: loop)
    }

    /// One event loop's streams, and its timer while it has any. Used on its loop only.
    private final class Round: @unchecked Sendable {
        let period: TimeAmount
        var streams: [ObjectIdentifier: StreamChannelHandler] = [:]
        var timer: RepeatedTask?

        init(period: TimeAmount) {
            self.period = period
        }

        func add(_ stream: StreamChannelHandler) {
            streams[ObjectIdentifier(stream)] = stream
            guard timer == nil, let loop = stream.eventLoop else { return }
            let round = NIOLoopBound(self, eventLoop: loop)
            timer = loop.scheduleRepeatedTask(initialDelay: period, delay: period) { _ in round.value.beat() }
        }

        func remove(_ stream: StreamChannelHandler) {
            streams[ObjectIdentifier(stream)] = nil
            if streams.isEmpty {
                timer?.cancel()
                timer = nil
            }
        }

        func beat() {
            // A copy: a stream the beat disconnects leaves the round meanwhile.
            for stream in streams.values { stream.beat() }
        }
    }
}
