import Foundation

/// Everything one run measured, as a Markdown table for people and one JSON object for scripts.
struct BenchmarkResults {
    var rows: Int
    var engine: String
    var localWriteSeconds = 0.0
    var rawLocalWrite = RawInsert.Timing(seconds: 0, cpuSeconds: 0)
    var pushSeconds = 0.0
    var pushCPUSeconds = 0.0
    var pushRequests = 0
    var device: DeviceChildProcess.Outcome?
    var rawInsert = RawInsert.Timing(seconds: 0, cpuSeconds: 0)
    var largeStore: LargeStoreBenchmark.Outcome?
    var serverProcessPeakMiB = 0.0
    var retries = 0

    var initialSyncSeconds: Double { device?.report.initialSyncSeconds ?? 0 }
    /// The device's CPU and the in-process server's during the sync (PostgreSQL's own processes not included).
    var initialSyncCPUSeconds: Double { (device?.report.initialSyncCPUSeconds ?? 0) + (device?.serverCPUSeconds ?? 0) }
    var initialSyncRowsPerSecond: Double { Double(rows) / initialSyncSeconds }
    var rawInsertRowsPerSecond: Double { Double(rows) / rawInsert.seconds }
    var pushMutationsPerSecond: Double { Double(rows) / pushSeconds }
    var localWritesPerSecond: Double { Double(rows) / localWriteSeconds }
    var rawLocalWritesPerSecond: Double { Double(rows) / rawLocalWrite.seconds }
    var noOpMilliseconds: [Double] { device?.report.noOpMilliseconds ?? [] }

    /// The keys documented in docs/benchmarks.md; a measure that did not run is `null`.
    var json: String {
        func finite(_ value: Double) -> Any { value.isFinite ? (value * 10_000).rounded() / 10_000 : NSNull() }
        let object: [String: Any] = [
            "rows": rows,
            "engine": engine,
            "initial_sync_rows_per_s": finite(initialSyncRowsPerSecond),
            "initial_sync_seconds": finite(initialSyncSeconds),
            "initial_sync_cpu_seconds": finite(initialSyncCPUSeconds),
            "raw_insert_rows_per_s": finite(rawInsertRowsPerSecond),
            "initial_sync_ratio": finite(initialSyncRowsPerSecond / rawInsertRowsPerSecond),
            "initial_sync_ratio_cpu": finite(rawInsert.cpuSeconds / initialSyncCPUSeconds),
            "push_mutations_per_s": finite(pushMutationsPerSecond),
            "push_ratio": finite(pushMutationsPerSecond / rawInsertRowsPerSecond),
            "push_cpu_seconds": finite(pushCPUSeconds),
            "local_writes_per_s": finite(localWritesPerSecond),
            "raw_local_writes_per_s": finite(rawLocalWritesPerSecond),
            "local_write_ratio": finite(localWritesPerSecond / rawLocalWritesPerSecond),
            "noop_sync_ms": finite(median(noOpMilliseconds)),
            "client_peak_mib": finite(device?.report.peakMiB ?? .nan),
            "server_process_peak_mib": finite(serverProcessPeakMiB),
            "large_rows": largeStore?.largeRows ?? 0,
            "large_store_ratio": finite(largeStore?.ratio ?? .nan),
            "large_store_ms": finite(largeStore.map { median($0.largeMilliseconds) } ?? .nan),
            "small_store_ms": finite(largeStore.map { median($0.smallMilliseconds) } ?? .nan),
            "retries": retries,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    var table: String {
        func number(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        let noOps = noOpMilliseconds.sorted()
        let report = device?.report
        var lines = [
            "",
            "| Measure (N = \(rows), server on \(engine)) | Result |",
            "|---|---:|",
            "| (a) initial sync, fresh on-disk device in its own process (pull + apply) | \(number(initialSyncRowsPerSecond)) rows/s (\(number(initialSyncSeconds, 2)) s, \(report?.requests ?? 0) requests; CPU \(number(report?.initialSyncCPUSeconds ?? 0, 2)) s device + \(number(device?.serverCPUSeconds ?? 0, 2)) s server) |",
            "| (b) raw SQLite insert, same rows and table, one transaction | \(number(rawInsertRowsPerSecond)) rows/s (\(number(rawInsert.seconds, 2)) s; CPU \(number(rawInsert.cpuSeconds, 2)) s) |",
            "| (a) / (b) | **\(number(initialSyncRowsPerSecond / rawInsertRowsPerSecond, 4))** |",
            "| (a) / (b) by CPU time (device + in-process server) | \(number(rawInsert.cpuSeconds / initialSyncCPUSeconds, 4)) |",
            "| (c) no-op sync latency, median of \(noOps.count) | \(number(median(noOps), 2)) ms (min \(number(noOps.first ?? 0, 2)), max \(number(noOps.last ?? 0, 2))) |",
            "| (d) push throughput, \(rows) local writes in one `sync()` | \(number(pushMutationsPerSecond)) mutations/s (\(number(pushSeconds, 2)) s, \(pushRequests) requests; CPU \(number(pushCPUSeconds, 2)) s) |",
            "| (d) / (b) | **\(number(pushMutationsPerSecond / rawInsertRowsPerSecond, 4))** |",
            "| (f) local writes (`put`, one transaction each, on-disk WAL store) | \(number(localWritesPerSecond)) writes/s (\(number(localWriteSeconds, 2)) s) |",
            "| (g) GRDB insert of the same rows, one transaction each, on-disk WAL | \(number(rawLocalWritesPerSecond)) rows/s (\(number(rawLocalWrite.seconds, 2)) s) |",
            "| (f) / (g) | **\(number(localWritesPerSecond / rawLocalWritesPerSecond, 4))** |",
            "| (e) client peak memory (the device's process alone, VmHWM) | **\(number(report?.peakMiB ?? 0, 1)) MiB** (\(number(report?.peakBeforeSyncMiB ?? 0, 1)) MiB before the sync) |",
            "| peak memory of the benchmark process (server + seeding device) | \(number(serverProcessPeakMiB, 1)) MiB |",
        ]
        if let large = largeStore {
            lines.append("| (h) \(LargeStoreBenchmark.changesPerRound) changes pulled into \(large.largeRows) rows vs \(LargeStoreBenchmark.smallRows) rows, median of \(large.largeMilliseconds.count) | \(number(median(large.largeMilliseconds), 2)) ms vs \(number(median(large.smallMilliseconds), 2)) ms: **\(number(large.ratio, 3))** (store built in \(number(large.buildSeconds, 1)) s) |")
        }
        if retries > 0 {
            lines.append("\nWarning: \(retries) sync(s) failed and were retried (timed in); the numbers above include the failed attempts.")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
