import Prometheus

extension MetricNameDescriptor {
    /// A metric named `name` whole (its namespace, subsystem and unit already in it, as `docs/operations.md` lists them).
    init(_ name: String, help: String) {
        self.init(metricName: name, unitName: "", helpText: help)
    }
}
