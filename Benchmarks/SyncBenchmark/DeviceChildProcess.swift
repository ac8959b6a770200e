import FerryTesting
import Foundation

/// The parent's side of ``DeviceOnlyRun``: starts this executable again in `--device-only` mode and follows its
/// lines. Its stderr (progress, errors) goes to the parent's stderr.
struct DeviceChildProcess {
    /// The child's report, and the CPU seconds the parent (the in-process server) spent between the child's
    /// `ready` and `synced` lines: the server's share of the initial sync.
    struct Outcome {
        var report: DeviceOnlyRun.DeviceRunReport
        var serverCPUSeconds: Double
    }

    static func run(_ arguments: DeviceOnlyRun.Arguments, password: String) async throws -> Outcome {
        var environment = ProcessInfo.processInfo.environment
        environment[DeviceOnlyRun.passwordVariable] = password
        let executable = Bundle.main.executableURL?.path(percentEncoded: false) ?? CommandLine.arguments[0]
        let process = try ChildProcess(executable, arguments: arguments.commandLine, environment: environment, standardError: .inherit)
        let lines = LineReader(process.standardOutput!)
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }

        var serverCPUStart: Double?
        var serverCPUSeconds = 0.0
        var last = ""
        while let line = await lines.next() {
            switch line {
            case "ready": serverCPUStart = ProcessMetrics.cpuSeconds()
            case "synced": serverCPUSeconds = ProcessMetrics.cpuSeconds() - (serverCPUStart ?? ProcessMetrics.cpuSeconds())
            default: last = line
            }
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("the device process exited with status \(process.terminationStatus)")
        }
        let report = try JSONDecoder().decode(DeviceOnlyRun.DeviceRunReport.self, from: Data(last.utf8))
        return Outcome(report: report, serverCPUSeconds: serverCPUSeconds)
    }
}

/// Lines of a pipe, read with blocking reads on a Dispatch thread, so that no thread of Swift's cooperative
/// pool (which the in-process server needs) ever waits on the pipe.
final class LineReader: @unchecked Sendable {  // Unchecked: `next()` is awaited by one caller at a time.
    private let handle: FileHandle
    private var buffer = Data()
    private var isAtEnd = false

    init(_ handle: FileHandle) { self.handle = handle }

    func next() async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.nextBlocking()) }
        }
    }

    private func nextBlocking() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            if isAtEnd {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            let chunk = handle.availableData
            if chunk.isEmpty { isAtEnd = true } else { buffer.append(chunk) }
        }
    }
}
