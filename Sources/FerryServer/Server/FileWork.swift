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

    /// Runs `work` on a file-work thread and returns its result.
    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await pool.runIfActive(work)
    }
}
