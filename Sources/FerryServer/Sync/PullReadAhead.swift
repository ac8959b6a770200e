import FerryCore
import Foundation
import Prometheus
import Synchronization

/// The next page of a paged pull, read while the client reads this one (docs/sync.md, "Read-ahead").
///
/// A client that pulls page after page (a plain HTTP client, a script, a fresh device) leaves the server idle while it
/// parses each reply, then waits for the next. When a reply says `hasMore`, the server starts reading the page the
/// client will ask for next — the same request with the reply's cursors — and answers that request from it.
///
/// A page read ahead is served only as the answer the server would give now: the caller's spaces, as read for the
/// new request, must equal those the page was read under. Every commit raises its space's `seq` in that list, and
/// membership, roles and key versions are in it too, so equal lists mean nothing the page covers changed in between,
/// on this instance or any other on the same database. Otherwise the page is dropped and read again.
final class PullReadAhead: Sendable {
    /// Whose request a page answers, and the request itself.
    struct Key: Hashable, Sendable {
        var userID: UUID
        var deviceID: UUID?
        var request: PullRequest
    }

    private struct Entry {
        var spaces: [SpaceSummary]
        var reply: Task<PullReply, any Error>
        var started: ContinuousClock.Instant
    }

    /// At most this many pages are held or being read, the oldest dropped first: each is up to a reply's byte budget.
    let capacity: Int
    /// A page not asked for within this long is not served (its client went away); it is dropped when the next read
    /// ahead starts, and until then counts toward ``capacity``.
    let lifetime: Duration
    private let entries = Mutex<[Key: Entry]>([:])
    private let outcomes: ReadAheadMetrics?

    init(capacity: Int = 16, lifetime: Duration = .seconds(30), metrics: ReadAheadMetrics? = nil) {
        self.capacity = capacity
        self.lifetime = lifetime
        self.outcomes = metrics
    }

    /// The page read ahead for `key`, if there is one and `spaces` (the caller's, read for this request) are the ones it
    /// was read under; `nil` otherwise (read the page now). Either way the entry is gone.
    func take(_ key: Key, spaces: [SpaceSummary]) async -> PullReply? {
        let entry = entries.withLock { $0.removeValue(forKey: key) }
        guard let entry else {
            outcomes?.missed.increment()
            return nil
        }
        guard entry.spaces == spaces, ContinuousClock.now - entry.started < lifetime, let reply = try? await entry.reply.value else {
            outcomes?.stale.increment()
            return nil
        }
        outcomes?.served.increment()
        return reply
    }

    /// Starts reading the page `key` asks for, with `read`, under the caller's `spaces` as read for the reply before it;
    /// returns the read already under way for `key` if there is one.
    @discardableResult
    func start(_ key: Key, spaces: [SpaceSummary], read: @escaping @Sendable () async throws -> PullReply) -> Task<PullReply, any Error> {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            if let held = entries[key], held.spaces == spaces, now - held.started < lifetime { return held.reply }
            entries = entries.filter { now - $0.value.started < lifetime }
            while entries.count >= capacity, let oldest = entries.min(by: { $0.value.started < $1.value.started }) {
                entries.removeValue(forKey: oldest.key)
            }
            // Not cancelled when dropped: a read stopped halfway through a query would cost its connection more.
            let reply = Task(operation: read)
            entries[key] = Entry(spaces: spaces, reply: reply, started: now)
            return reply
        }
    }
}

/// `ferry_pull_read_ahead_total{outcome}`: pages read ahead and served, pages read ahead but stale (read again), and
/// pulls for which no page had been read ahead.
struct ReadAheadMetrics: Sendable {
    let served: Counter
    let stale: Counter
    let missed: Counter

    init(registry: PrometheusCollectorRegistry) {
        let metric = MetricNameDescriptor(
            "ferry_pull_read_ahead_total", help: "Pull pages by read-ahead outcome: served, stale (read again), missed (none read ahead)."
        )
        served = registry.makeCounter(descriptor: metric, labels: [("outcome", "served")])
        stale = registry.makeCounter(descriptor: metric, labels: [("outcome", "stale")])
        missed = registry.makeCounter(descriptor: metric, labels: [("outcome", "missed")])
    }
}
