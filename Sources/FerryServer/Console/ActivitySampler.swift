import FerryCore
import Foundation
import Prometheus
import ServiceLifecycle
import Synchronization

/// The console's charts, read from the server's own metrics: every `interval` it renders the Prometheus registry, as
/// `/metrics` does, and keeps what changed since the last reading (the last `capacity` samples, an hour by default).
/// Nothing else counts twice.
final class ActivitySampler: Service, Sendable {
    /// One interval's activity.
    struct Sample: Sendable {
        var at: Date
        /// Responses by status class (`2xx`, `4xx`, `5xx`…).
        var requests: [String: Double]
        /// Requests by route family (`sync`, `auth`, `rest`, `storage`, `console`, `other`).
        var byRoute: [String: Double]
        var pushes: Double
        var pulls: Double
        var conflicts: Double
        var refused: Double
        /// Open streams at the end of the interval (a gauge, not a difference).
        var streams: Double
        /// Request latency percentiles over the interval, from the duration histogram's buckets.
        var latency: (p50: Double, p95: Double, p99: Double)
    }

    let registry: PrometheusCollectorRegistry
    let interval: Duration
    let capacity: Int
    private let state = Mutex<(samples: [Sample], previous: MetricReading?)>(([], nil))

    init(registry: PrometheusCollectorRegistry, interval: Duration = .seconds(10), capacity: Int = 360) {
        self.registry = registry
        self.interval = interval
        self.capacity = capacity
    }

    var samples: [Sample] { state.withLock { $0.samples } }

    func run() async throws {
        sample()
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                self.sample()
            }
        }
    }

    /// Takes one reading now and stores what changed since the one before.
    func sample(at time: Date = Date()) {
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        let reading = MetricReading(text: String(decoding: bytes, as: UTF8.self))
        state.withLock { state in
            if let previous = state.previous {
                state.samples.append(reading.sample(since: previous, at: time))
                if state.samples.count > capacity { state.samples.removeFirst(state.samples.count - capacity) }
            }
            state.previous = reading
        }
    }
}

/// The series of one rendering of the registry the console charts, as running totals.
struct MetricReading: Sendable {
    var requests: [String: Double] = [:]
    var byRoute: [String: Double] = [:]
    var mutations: [String: Double] = [:]
    var streams: Double = 0
    /// Cumulative counts of the request-duration buckets by upper bound, over every route.
    var buckets: [Double: Double] = [:]

    init(text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            let name = series.prefix { $0 != "{" }
            let labels = Self.labels(series.dropFirst(name.count))
            switch name {
            case "ferry_http_requests_total":
                let status = labels["status"] ?? "?"
                requests["\(status.prefix(1))xx", default: 0] += value
                byRoute[Self.family(labels["route"] ?? ""), default: 0] += value
                if labels["route"] == "/sync/v1/push" { mutations["pushes", default: 0] += value }
                if labels["route"] == "/sync/v1/pull" { mutations["pulls", default: 0] += value }
            case "ferry_sync_mutations_total":
                mutations[labels["outcome"] ?? "?", default: 0] += value
            case "ferry_realtime_streams":
                streams = value
            case "ferry_http_request_duration_seconds_bucket":
                let bound = labels["le"].flatMap { $0 == "+Inf" ? Double.infinity : Double($0) } ?? .infinity
                buckets[bound, default: 0] += value
            default:
                continue
            }
        }
    }

    func sample(since previous: MetricReading, at time: Date) -> ActivitySampler.Sample {
        func delta(_ now: [String: Double], _ before: [String: Double]) -> [String: Double] {
            now.mapValues { $0 }.merging(before.mapValues { _ in 0 }) { current, _ in current }
                .reduce(into: [:]) { result, entry in result[entry.key] = max(0, entry.value - (before[entry.key] ?? 0)) }
        }
        let changes = delta(mutations, previous.mutations)
        let counts = buckets.mapValues { $0 }.reduce(into: [Double: Double]()) { result, entry in
            result[entry.key] = max(0, entry.value - (previous.buckets[entry.key] ?? 0))
        }
        return ActivitySampler.Sample(
            at: time, requests: delta(requests, previous.requests), byRoute: delta(byRoute, previous.byRoute),
            pushes: changes["pushes"] ?? 0, pulls: changes["pulls"] ?? 0, conflicts: changes["merged"] ?? 0,
            refused: changes["rejected"] ?? 0, streams: streams,
            latency: (Self.percentile(0.5, counts), Self.percentile(0.95, counts), Self.percentile(0.99, counts))
        )
    }

    /// The `quantile` of a histogram's cumulative bucket counts, in milliseconds, interpolated within its bucket as
    /// Prometheus's `histogram_quantile` does; 0 without observations.
    static func percentile(_ quantile: Double, _ cumulative: [Double: Double]) -> Double {
        let bounds = cumulative.keys.sorted()
        guard let total = bounds.last.flatMap({ cumulative[$0] }), total > 0 else { return 0 }
        let rank = quantile * total
        var (lowerBound, lowerCount) = (0.0, 0.0)
        for bound in bounds {
            let count = cumulative[bound] ?? 0
            if count >= rank {
                // Past the last finite bound there is nothing to interpolate towards: answer that bound.
                guard bound.isFinite else { return lowerBound * 1000 }
                let within = count - lowerCount
                let fraction = within > 0 ? (rank - lowerCount) / within : 1
                return (lowerBound + (bound - lowerBound) * fraction) * 1000
            }
            (lowerBound, lowerCount) = (bound, count)
        }
        return lowerBound * 1000
    }

    /// The route family a matched route pattern belongs to.
    static func family(_ route: String) -> String {
        for (prefix, family) in [("/sync/", "sync"), ("/auth/", "auth"), ("/rest/", "rest"), ("/storage/", "storage"), ("/console", "console")]
        where route.hasPrefix(prefix) {
            return family
        }
        return "other"
    }

    /// `{a="1",b="x"}` as a dictionary (Prometheus escapes quotes and backslashes in values; route patterns have neither).
    static func labels(_ text: Substring) -> [String: String] {
        guard text.hasPrefix("{"), text.hasSuffix("}") else { return [:] }
        var labels: [String: String] = [:]
        for pair in text.dropFirst().dropLast().split(separator: ",") {
            guard let equals = pair.firstIndex(of: "=") else { continue }
            labels[String(pair[..<equals])] = String(pair[pair.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }
        return labels
    }
}
