import FerryTesting
import Foundation
import Synchronization
import Testing

/// The real `git` program, the peer every vault test checks against.
enum GitTool {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `git ARGUMENTS` (in `directory` when given) and returns its trimmed standard output.
    ///
    /// The process is waited for on a thread of its own, never on Swift's cooperative pool or Dispatch's global queues: on a 2-core machine two
    /// blocked pool threads would stall every other test running in parallel.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(arguments, in: directory, environment: environment) })
            }
        }
    }

    private static func runBlocking(_ arguments: [String], in directory: URL?, environment: [String: String]) throws -> String {
        var merged = ProcessInfo.processInfo.environment
        merged["GIT_CONFIG_NOSYSTEM"] = "1"
        merged["GIT_AUTHOR_NAME"] = "Peer"
        merged["GIT_AUTHOR_EMAIL"] = "peer@example.com"
        merged["GIT_COMMITTER_NAME"] = "Peer"
        merged["GIT_COMMITTER_EMAIL"] = "peer@example.com"
        merged.merge(environment) { $1 }
        let process = try ChildProcess("git", arguments: arguments, environment: merged, currentDirectory: directory?.path(percentEncoded: false))
        // Standard error drains on a thread of its own, so a chatty git never blocks on a full pipe.
        let errorData = Mutex(Data())
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = process.standardError!.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            drained.signal()
        }
        let data = process.standardOutput!.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "git \(arguments.joined(separator: " ")) failed: \(String(decoding: errorData.withLock { $0 }, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Creates a bare repository whose HEAD is `main`.
    static func makeBare(at url: URL) async throws {
        try await run(["init", "--bare", "--initial-branch=main", url.path(percentEncoded: false)])
    }

    /// The tree id of `revision` in the repository whose git folder is `gitDirectory`.
    static func tree(gitDirectory: URL, revision: String = "HEAD") async throws -> String {
        try await run(["--git-dir", gitDirectory.path(percentEncoded: false), "rev-parse", "\(revision)^{tree}"])
    }
}
