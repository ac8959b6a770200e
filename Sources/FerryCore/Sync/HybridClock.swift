import Foundation

/// Issues ``HLC`` readings for one node: each reading is later than every reading the node issued or
/// observed before, even when the wall clock stands still or steps back.
public struct HybridClock: Sendable, Hashable {
    /// The node's id, part of every reading.
    public let node: String
    /// The latest reading issued or observed.
    public private(set) var latest: HLC

    /// Creates a clock that continues after `latest` (persist ``latest`` to survive restarts).
    public init(node: String, latest: HLC = .zero) {
        self.node = node
        self.latest = latest
    }

    /// A new reading for a local event at wall time `now`.
    public mutating func tick(now: Date = Date()) -> HLC {
        let wall = now.ferryMilliseconds
        if wall > latest.milliseconds {
            latest = HLC(milliseconds: wall, counter: 0, node: node)
        } else if latest.counter < HLC.maximumCounter {
            latest = HLC(milliseconds: latest.milliseconds, counter: latest.counter + 1, node: node)
        } else {
            latest = HLC(milliseconds: latest.milliseconds + 1, counter: 0, node: node)
        }
        return latest
    }

    /// Moves the clock past a reading seen in a change from elsewhere, so the next local edit wins over it.
    public mutating func observe(_ remote: HLC) {
        if (remote.milliseconds, remote.counter) > (latest.milliseconds, latest.counter) {
            latest = HLC(milliseconds: remote.milliseconds, counter: remote.counter, node: node)
        }
    }
}
