import FerryTesting
import Foundation
import Synchronization
import Testing

/// The built `ferry` executable, run as a child process the way a person or a supervisor runs it.
///
/// Output arrives as events on one stream, so a test waits on what it expects (a line, the exit)
/// with a deadline instead of sleeping.
final class FerryProcess: Sendable {
    struct Exit {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    private enum Event {
        case line(String)
        case stdoutClosed
        case stderrClosed
        case exited
    }

    private let process: ChildProcess
    private let stdoutText = Mutex("")
    private let stderrText = Mutex("")
    private let events: AsyncStream<Event>

    /// The `ferry` binary beside the test bundle (SwiftPM builds both into one folder).
    static var executable: URL {
        get throws {
            let beside = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "ferry")
            if FileManager.default.isExecutableFile(atPath: beside.path()) { return beside }
            let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let fallback = root.appending(path: ".build/debug/ferry")
            try #require(FileManager.default.isExecutableFile(atPath: fallback.path()), "build the ferry executable first")
            return fallback
        }
    }

    /// Starts `ferry ARGUMENTS` with the test's environment minus any `FERRY_` settings, plus `environment`.
    /// Password hashes are made at the lowest cost, as the in-process servers' are (`TestDatabase`): at OWASP's, the
    /// children's sign-ups were a seventh of the suite's CPU and missed their deadline on a loaded machine. A test
    /// that needs the default passes its own `FERRY_PASSWORD_HASH_COST`.
    init(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws {
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        merged["FERRY_PASSWORD_HASH_COST"] = "10"
        merged.merge(environment) { $1 }
        let (events, continuation) = AsyncStream<Event>.makeStream()
        self.events = events
        process = try ChildProcess(
            try Self.executable.path(percentEncoded: false), arguments: arguments, environment: merged,
            standardInput: input == nil ? .null : .pipe, onExit: { _ in continuation.yield(.exited) }
        )
        // Blocking reads on their own threads: Foundation's readabilityHandler can miss EOF on Linux.
        let stdoutHandle = process.standardOutput!, stderrHandle = process.standardError!
        Thread.detachNewThread { [self] in
            while case let data = stdoutHandle.availableData, !data.isEmpty {
                let text = String(decoding: data, as: UTF8.self)
                stdoutText.withLock { $0 += text }
                for line in text.split(separator: "\n") { continuation.yield(.line(String(line))) }
            }
            continuation.yield(.stdoutClosed)
        }
        Thread.detachNewThread { [self] in
            let data = stderrHandle.readDataToEndOfFile()
            stderrText.withLock { $0 += String(decoding: data, as: UTF8.self) }
            continuation.yield(.stderrClosed)
        }
        if let input, let stdin = process.standardInput {
            stdin.write(Data(input.utf8))
            try stdin.close()
        }
    }

    /// The child's process id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// The CPU time (user and system) the child has used so far, from `/proc/<pid>/stat`.
    var cpuTime: Duration {
        get throws {
            let stat = try String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8)
            // Fields after the parenthesised command name; utime and stime are the 14th and 15th of the line.
            let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
            let ticks = try #require(Int(fields[11])) + (try #require(Int(fields[12])))
            return .milliseconds(ticks * 1000 / sysconf(Int32(_SC_CLK_TCK)))
        }
    }

    /// A test that fails or is interrupted must not leave a server running.
    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Waits for a standard-output line starting with `prefix`; `nil` if the process ends or the deadline passes first.
    /// The deadlines here catch hangs, not slowness: a 2-core machine running the whole suite is slow.
    func waitForLine(startingWith prefix: String, timeout: Duration = .seconds(120)) async -> String? {
        await withDeadline(timeout) { events in
            for await event in events {
                if case .line(let line) = event, line.hasPrefix(prefix) { return line }
                if case .exited = event { return nil }
            }
            return nil
        } ?? nil
    }

    /// Sends `signal` (SIGTERM by default).
    func signal(_ signal: Int32 = SIGTERM) {
        kill(process.processIdentifier, signal)
    }

    /// Kills the process unless it has exited: for a `defer`, so a failed expectation leaves no server running.
    func killIfRunning() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits until the process has exited and closed its output (killing it past the deadline).
    func waitForExit(timeout: Duration = .seconds(120)) async -> Exit {
        let finished: Bool? = await withDeadline(timeout) { events in
            var pending = 3
            for await event in events {
                switch event {
                case .stdoutClosed, .stderrClosed, .exited: pending -= 1
                case .line: break
                }
                if pending == 0 { return true }
            }
            return false
        }
        if finished != true { process.terminate() }
        process.waitUntilExit()
        return Exit(status: process.terminationStatus, stdout: stdoutText.withLock { $0 }, stderr: stderrText.withLock { $0 })
    }

    private func withDeadline<Value: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable (AsyncStream<Event>) async -> Value
    ) async -> Value? {
        let events = self.events
        return await withTaskGroup(of: Value?.self) { group in
            group.addTask { await body(events) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Runs `ferry` to completion.
    static func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) async throws -> Exit {
        try await FerryProcess(arguments, environment: environment, input: input).waitForExit()
    }
}
