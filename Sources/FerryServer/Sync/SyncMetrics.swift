import FerryCore
import Prometheus

/// `ferry_sync_mutations_total{outcome}`: each commit's mutations, `applied`, `rejected` or `duplicate`, and among the
/// applied ones those `merged` with a later change to one of their fields (a conflict the merge resolved).
struct SyncMetrics: Sendable {
    let applied: Counter
    let rejected: Counter
    let duplicate: Counter
    let merged: Counter

    init(registry: PrometheusCollectorRegistry) {
        let metric = MetricNameDescriptor("ferry_sync_mutations_total", help: "Mutations committed, by outcome.")
        applied = registry.makeCounter(descriptor: metric, labels: [("outcome", "applied")])
        rejected = registry.makeCounter(descriptor: metric, labels: [("outcome", "rejected")])
        duplicate = registry.makeCounter(descriptor: metric, labels: [("outcome", "duplicate")])
        merged = registry.makeCounter(descriptor: metric, labels: [("outcome", "merged")])
    }

    func count(_ outcome: PushOutcome) {
        var counts: [MutationResult.Status: Int] = [:]
        for result in outcome.response.results { counts[result.status, default: 0] += 1 }
        if let count = counts[.applied] { applied.increment(by: Int64(count)) }
        if let count = counts[.rejected] { rejected.increment(by: Int64(count)) }
        if let count = counts[.duplicate] { duplicate.increment(by: Int64(count)) }
        if outcome.conflicts > 0 { merged.increment(by: Int64(outcome.conflicts)) }
    }
}
