import NIOPosix

/// The server's one way off Swift's cooperative pool for blocking file calls: blob bytes, directory walks, backups.
///
/// The cooperative pool has one thread per core, and every request runs on it: a `write` that waits on a busy disk, or
/// an `open` on a network volume, would stall every request meanwhile. File work runs on a pool of its own instead,
/// larger than NIO's blocking pool (one thread per core as well), since its threads mostly wait: a backup copying for
/// minutes takes one of them, and a slow volume slows the requests that use it, no others.
enum FileWork {
    /// Threads that wait on files; each call holds one for one short piece of work (a chunk, a rename, a listing).
    static let threadCount = 8

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    /// Runs `work` on a file-work thread and returns its result, even when the calling task is cancelled meanwhile:
    /// what is handed here (a close, an unlock, the rest of a write) must happen, and each piece is short. NIO's own
    /// `runIfActive` skips work whose task was cancelled, which left descriptors open and upload locks held.
    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            pool.submit { state in
                guard case .active = state else { return continuation.resume(throwing: CancellationError()) }
                continuation.resume(with: Swift.Result { try work() })
            }
        }
    }
}
