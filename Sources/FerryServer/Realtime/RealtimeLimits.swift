import Foundation

/// Bounds of the realtime stream (`GET /sync/v1/stream`).
public struct RealtimeLimits: Sendable, Hashable {
    /// Streams one instance holds open at once; past it a new one is refused with 503 `too_many_streams`.
    public var maximumStreams = 10_000
    /// Streams one account holds open at once; past it a new one is refused with 429 `too_many_streams`.
    public var maximumStreamsPerAccount = 100
    /// Stream requests being admitted at once (authenticated, counted and upgraded); past it a new one is refused at
    /// once, before its token is read, with 503 `too_many_streams` and `Retry-After: 1`. A connect storm (every device
    /// of a restarted instance coming back together) then waits at the clients, which back off with jitter, instead of
    /// queueing in the server ahead of the requests of streams already open.
    public var maximumOpeningStreams = 64
    /// How often the server pings an open stream; a client that has not answered by the next ping is disconnected.
    public var heartbeatInterval: Duration = .seconds(30)

    /// The largest poke that carries its commit's changes (the stream message, a pull's reply inside): a commit whose
    /// changes do not fit is announced without them, and devices pull. 0 turns carrying off. Ferry's clients read
    /// messages of up to 64 KiB.
    public var carriedChangeBytes = 32 * 1024

    /// The defaults.
    public init() {}
}
