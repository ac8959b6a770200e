import FerryTesting
import Foundation
import Testing

/// The real `git http-backend`, served on a free loopback port with basic auth by `git_http_server.py`.
final class GitHTTPServer: Sendable {
    private let process: ChildProcess
    let port: Int
    private let countFile: URL

    private init(process: ChildProcess, port: Int, countFile: URL) {
        self.process = process
        self.port = port
        self.countFile = countFile
    }

    /// Starts serving the repositories under `projectRoot`, accepting `token` as the basic-auth password.
    static func start(projectRoot: URL, token: String) async throws -> GitHTTPServer {
        // Reading the first line blocks: do it on a thread of its own, off Swift's cooperative pool.
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try startBlocking(projectRoot: projectRoot, token: token) })
            }
        }
    }

    private static func startBlocking(projectRoot: URL, token: String) throws -> GitHTTPServer {
        let script = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "git_http_server.py")
        let countFile = projectRoot.appending(path: ".unauthorized-count")
        let process = try ChildProcess(
            "python3", arguments: [script.path(percentEncoded: false), projectRoot.path(percentEncoded: false), token, countFile.path(percentEncoded: false)],
            environment: ProcessInfo.processInfo.environment, standardError: .null
        )
        // The first line is "PORT n"; a blocking read returns as soon as the server prints it.
        var buffer = Data()
        while !buffer.contains(UInt8(ascii: "\n")) {
            let chunk = process.standardOutput!.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        let line = String(decoding: buffer, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw GitTool.Failure(description: "git_http_server.py did not start: '\(line)'")
        }
        return GitHTTPServer(process: process, port: port, countFile: countFile)
    }

    /// `http://127.0.0.1:PORT/NAME`.
    func url(_ repository: String) -> String { "http://127.0.0.1:\(port)/\(repository)" }

    /// How many requests were refused with 401 so far.
    var unauthorizedCount: Int {
        (try? String(contentsOf: countFile, encoding: .utf8)).flatMap { Int($0) } ?? 0
    }

    /// Stops the server at once (SIGKILL: the port closes with it); nothing waits on it.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
    }
}
