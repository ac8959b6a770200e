import Dispatch

/// Lets at most `limit` operations run at once; up to `maximumWaiting` others wait in order, and the rest are
/// refused with ``Full`` at once.
actor AsyncGate {
    /// Thrown when every slot is busy and the queue is full.
    struct Full: Error {}

    private let limit: Int
    private let maximumWaiting: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int, maximumWaiting: Int) {
        self.limit = limit
        self.maximumWaiting = maximumWaiting
    }

    /// Runs `work` on a thread outside Swift's cooperative pool once a slot is free: scrypt blocks its thread
    /// for a long time, and on the cooperative pool (one thread per core) it would stall every request.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        if running >= limit {
            guard waiting.count < maximumWaiting else { throw Full() }
            await withCheckedContinuation { waiting.append($0) }
        } else {
            running += 1
        }
        defer {
            if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
        }
        // A request whose deadline passed while it queued gives up its turn instead of hashing for nobody.
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            Self.queue.async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    private static let queue = DispatchQueue(label: "ferry.blocking-work", qos: .userInitiated, attributes: .concurrent)
}
