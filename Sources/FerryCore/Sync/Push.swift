import Foundation

/// The body of `POST /sync/v1/push`.
public struct PushRequest: Sendable, Hashable, Codable {
    /// The pushing device.
    public var deviceId: UUID
    /// Mutations in ascending `mutationId` order.
    public var mutations: [Mutation]

    /// Creates a push.
    public init(deviceId: UUID, mutations: [Mutation]) {
        self.deviceId = deviceId
        self.mutations = mutations
    }
}

/// What the server did with one mutation.
public struct MutationResult: Sendable, Hashable, Codable {
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
public struct PushResponse: Sendable, Hashable, Codable {
    /// One result per mutation of the request, in order.
    public var results: [MutationResult]
    /// The highest mutation id the server has processed for this device (acknowledged up to here).
    public var lastMutationId: Int64

    /// Creates a reply.
    public init(results: [MutationResult], lastMutationId: Int64) {
        self.results = results
        self.lastMutationId = lastMutationId
    }
}
