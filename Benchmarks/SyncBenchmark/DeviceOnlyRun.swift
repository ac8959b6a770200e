import FerryClient
import Foundation

/// The hidden `--device-only` mode: the benchmark re-executes itself to run a fresh device's initial sync in a
/// process of its own, so that the peak memory it reports is the device's alone (no server, no seeding device).
///
/// The parent passes the server, the anon key, the account and the store path; the password comes in the
/// environment (``passwordVariable``), not in the arguments. The child prints, one line each, on stdout:
/// `ready` just before its initial sync starts, `synced` just after it ends (the parent reads its own CPU time at
/// both, which is the server's share of the sync), and last one JSON ``DeviceRunReport``.
enum DeviceOnlyRun {
    static let flag = "--device-only"
    static let passwordVariable = "FERRY_BENCHMARK_PASSWORD"

    struct Arguments: Sendable {
        var endpoint: BenchmarkDevice.Endpoint
        var email: String
        var storeURL: URL
        var expectedRows: Int
        var noOpSyncs: Int

        var commandLine: [String] {
            [
                DeviceOnlyRun.flag, "--server", endpoint.baseURL.absoluteString, "--anon-key", endpoint.anonKey,
                "--email", email, "--store", storeURL.path(), "--rows", String(expectedRows), "--noop-syncs", String(noOpSyncs),
            ]
        }

        static func parse(_ arguments: [String]) throws -> Arguments {
            var values: [String: String] = [:]
            var iterator = arguments.makeIterator()
            while let name = iterator.next() {
                guard name.hasPrefix("--"), let value = iterator.next() else { throw BenchmarkError("\(flag): bad argument \(name)") }
                values[name] = value
            }
            guard let server = values["--server"].flatMap(URL.init(string:)), let anonKey = values["--anon-key"],
                  let email = values["--email"], let store = values["--store"],
                  let rows = values["--rows"].flatMap(Int.init), let noOpSyncs = values["--noop-syncs"].flatMap(Int.init) else {
                throw BenchmarkError("\(flag) needs --server, --anon-key, --email, --store, --rows and --noop-syncs")
            }
            return Arguments(
                endpoint: .init(baseURL: server, anonKey: anonKey), email: email, storeURL: URL(fileURLWithPath: store),
                expectedRows: rows, noOpSyncs: noOpSyncs
            )
        }
    }

    /// What the child measured of itself.
    struct DeviceRunReport: Codable, Sendable {
        var initialSyncSeconds: Double
        var initialSyncCPUSeconds: Double
        var requests: Int
        var applied: Int
        var retries: Int
        var noOpMilliseconds: [Double]
        /// The child's peak resident memory after the initial sync (see ``ProcessMetrics/peakResidentMiB()``).
        var peakMiB: Double
        /// The child's resident peak just before the sync began: the process, its libraries and a signed-in engine.
        var peakBeforeSyncMiB: Double
    }

    /// Runs the device's part and prints its lines; the process's exit status says whether it worked.
    static func main(_ arguments: [String]) async throws {
        let arguments = try Arguments.parse(arguments)
        guard let password = ProcessInfo.processInfo.environment[passwordVariable] else {
            throw BenchmarkError("\(flag) reads the password from \(passwordVariable)")
        }
        let device = try await BenchmarkDevice.signIn(arguments.endpoint, email: arguments.email, password: password, signUp: false, fileURL: arguments.storeURL)
        let clock = ContinuousClock()
        let report = try await device.running { () async throws -> DeviceRunReport in
            let peakBefore = ProcessMetrics.peakResidentMiB()
            emit("ready")
            let (start, cpu) = (clock.now, ProcessMetrics.cpuSeconds())
            let (sync, retries) = try await device.syncRetrying()
            let seconds = (clock.now - start).seconds
            let cpuSeconds = ProcessMetrics.cpuSeconds() - cpu
            emit("synced")
            let peak = ProcessMetrics.peakResidentMiB()
            guard retries > 0 || sync.applied == arguments.expectedRows else {
                throw BenchmarkError("the initial sync applied \(sync.applied) of \(arguments.expectedRows) rows")
            }
            var noOps: [Double] = []
            for _ in 0..<arguments.noOpSyncs {
                let start = clock.now
                let report = try await device.engine.sync()
                noOps.append((clock.now - start).seconds * 1000)
                guard report.applied == 0 else { throw BenchmarkError("a no-op sync applied \(report.applied) rows") }
            }
            return DeviceRunReport(
                initialSyncSeconds: seconds, initialSyncCPUSeconds: cpuSeconds, requests: sync.requests, applied: sync.applied,
                retries: retries, noOpMilliseconds: noOps, peakMiB: peak, peakBeforeSyncMiB: peakBefore
            )
        }
        emit(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    /// One line on stdout, written at once (stdout is a pipe, which `print` would buffer).
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
