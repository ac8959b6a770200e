import Foundation

/// The body of `POST /sync/v1/push`.
public struct PushRequest: Sendable, Hashable {
    /// The pushing device.
    public var deviceId: UUID
    /// Mutations in ascending `mutationId` order.
    public var mutations: [Mutation]
    /// The device's pull cursor of each space it pushes to (0 for a space it has not pulled). Where a cursor is the
    /// space's last commit and the push writes nothing there but its own records, the reply's
    /// ``PushResponse/cursors`` moves it past the push, so the device does not pull its own writes back.
    public var cursors: [UUID: Int64]
    /// The last mutation id of the push this one was sent behind, while that one was still on the wire. The server
    /// processes this push only when the last id it processed for the device is exactly that one, and otherwise
    /// refuses it whole with `409 push_out_of_order` (nothing changed; send it again once the earlier push is
    /// answered). So a push never overtakes the one before it. `nil` for a push sent alone.
    public var follows: Int64?

    /// Creates a push.
    public init(deviceId: UUID, mutations: [Mutation], cursors: [UUID: Int64] = [:], follows: Int64? = nil) {
        self.deviceId = deviceId
        self.mutations = mutations
        self.cursors = cursors
        self.follows = follows
    }
}

/// What the server did with one mutation.
public struct MutationResult: Sendable, Hashable {
    /// The outcome of a mutation.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Merged and committed (possibly changing nothing, when every clock was older).
        case applied
        /// Refused; `code` and `message` say why. Never retried: the device drops it and reports it.
        case rejected
        /// Already applied by an earlier push (a replay); nothing changed.
        case duplicate
    }

    /// The mutation's id.
    public var mutationId: Int64
    /// Applied, rejected or duplicate.
    public var status: Status
    /// A stable machine code when rejected.
    public var code: String?
    /// A message a person can act on when rejected.
    public var message: String?
    /// Clocks the server lowered because they ran too far ahead of its own, as it stored them.
    /// The device replaces its local clocks for these fields, so both sides keep the same clocks.
    public var clocks: [String: HLC]?

    /// Creates a result.
    public init(mutationId: Int64, status: Status, code: String? = nil, message: String? = nil, clocks: [String: HLC]? = nil) {
        self.mutationId = mutationId
        self.status = status
        self.code = code
        self.message = message
        self.clocks = clocks
    }
}

/// The reply to a push, sent only after the batch committed.
public struct PushResponse: Sendable, Hashable {
    /// One result per mutation of the request, in order.
    public var results: [MutationResult]
    /// The highest mutation id the server has processed for this device (acknowledged up to here).
    public var lastMutationId: Int64
    /// New pull cursors, for the spaces where the request's cursor was the space's last commit and this push wrote
    /// only the records its mutations name: the device already holds everything up to these commits (its own
    /// writes), so it stores them in the acknowledgement's transaction instead of pulling its writes back.
    public var cursors: [UUID: Int64]
    /// The most pushes the device may have on the wire at once, each after the first naming the one it
    /// ``PushRequest/follows``. Absent (one at a time) from a server that does not check `follows`.
    public var maxInFlight: Int?

    /// Creates a reply.
    public init(results: [MutationResult], lastMutationId: Int64, cursors: [UUID: Int64] = [:], maxInFlight: Int? = nil) {
        self.results = results
        self.lastMutationId = lastMutationId
        self.cursors = cursors
        self.maxInFlight = maxInFlight
    }
}
