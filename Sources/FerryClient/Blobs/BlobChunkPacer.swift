import FerryCore

/// How many bytes a transfer's next blob request moves.
///
/// A transfer starts with the configured chunk (``SyncEngine/Configuration/blobChunkSize``). After each request the
/// next is sized to what the last one's rate moves in ``target``, at most four times the last and never outside the
/// configured chunk and ``ceiling`` (``SyncEngine/Configuration/blobChunkSizeLimit``). On a fast network that is
/// fewer round trips and fewer syncs to disk on the server; on a slow one it stays at the configured chunk, which
/// each request must move within the transport's timeout (30 s, fifteen times ``target``).
struct BlobChunkPacer: Sendable {
    /// The time a request is sized to take.
    static let target: Duration = .seconds(2)

    /// The configured chunk: the first request's size, and the smallest.
    let floor: Int
    /// The largest request: the limit, or the configured chunk when it is larger.
    let ceiling: Int
    /// The next request's size.
    private(set) var next: Int

    init(chunkSize: Int, limit: Int) {
        floor = chunkSize
        ceiling = max(chunkSize, limit)
        next = chunkSize
    }

    /// Sizes the next request from one that moved `bytes` in `took`.
    mutating func record(bytes: Int, took: Duration) {
        guard bytes > 0 else { return }
        let fitsTarget = Double(bytes) / max(took.timeInterval, 1e-6) * Self.target.timeInterval
        let grown = min(fitsTarget, Double(bytes) * 4, Double(ceiling))
        next = max(floor, Int(grown))
    }
}
