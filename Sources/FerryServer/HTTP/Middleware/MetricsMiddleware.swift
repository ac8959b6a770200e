import HTTPTypes
import Hummingbird
import Prometheus

/// Counts requests and records their durations by method, route and status into a per-server
/// Prometheus registry (not the process-wide MetricsSystem, so several servers can share a process).
///
/// The route label is the matched route pattern (`/sync/v1/pull`), never the raw path, so unknown
/// paths cannot blow up the number of series.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let registry: PrometheusCollectorRegistry

    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "ferry", subsystem: "http", metricName: "requests", unitName: "total",
            helpText: "HTTP requests by method, matched route and status."
        )
    }

    static var durations: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "ferry", subsystem: "http", metricName: "request_duration", unitName: "seconds",
            helpText: "HTTP request durations by method, matched route and status."
        )
    }

    static var durationBuckets: [Duration] {
        [.milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
         .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let labels = [
            ("method", request.method.rawValue),
            ("route", context.endpointPath ?? "unmatched"),
            ("status", String(response.status.code)),
        ]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(descriptor: Self.durations, labels: labels, buckets: Self.durationBuckets)
            .record(ContinuousClock.now - start)
        return response
    }
}
