import FerrySecurity
import Foundation

/// Files of a given size for blob tests, written and hashed a megabyte at a time.
public enum TestFiles {
    /// Writes `megabytes` MiB of bytes that follow from `seed` to `path` (varied, so nothing compresses or repeats).
    public static func write(_ path: String, megabytes: Int, seed: UInt64 = 1) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)  // FileHandle then says why it cannot open it
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var generator = SplitMix64(seed: seed)
        for _ in 0..<megabytes {
            var chunk = Data(count: 1 << 20)
            chunk.withUnsafeMutableBytes { bytes in
                let words = bytes.bindMemory(to: UInt64.self)
                for index in words.indices { words[index] = generator.next() }
            }
            try handle.write(contentsOf: chunk)
        }
    }

    /// A new file of `megabytes` MiB in the temporary folder.
    public static func temporary(megabytes: Int, seed: UInt64 = 1) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "ferry-blob-\(UUID().uuidString)")
        try write(url.path(), megabytes: megabytes, seed: seed)
        return url
    }

    /// The SHA-256 of a file, as a blob's address.
    public static func sha256(_ url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = ContentHasher()
        while let chunk = try handle.readChunk(upToCount: 1 << 20) { hasher.update(chunk) }
        return hasher.finalize()
    }

    /// The SHA-256 of bytes.
    public static func sha256(_ data: Data) -> String {
        var hasher = ContentHasher()
        hasher.update(data)
        return hasher.finalize()
    }
}

/// A Python script of `Tests/Compatibility` (a real third-party client) run against a live server.
public enum PythonCheck {
    /// Whether python3 can import every module of `modules`.
    public static func canImport(_ modules: String) -> Bool {
        let probe = try? ChildProcess(
            "python3", arguments: ["-c", "import \(modules)"], environment: ProcessInfo.processInfo.environment,
            standardOutput: .null, standardError: .null
        )
        return probe?.waitUntilExit() == 0
    }

    /// Runs `script` with `arguments`; its exit status and standard output (standard error goes to the test's).
    public static func run(_ script: String, arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = try ChildProcess(
            "python3", arguments: [script] + arguments, environment: ProcessInfo.processInfo.environment, standardError: .inherit
        )
        // Read on a thread of its own: the pipe must drain while the script runs.
        let text = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: String(decoding: process.standardOutput!.readDataToEndOfFile(), as: UTF8.self))
            }
        }
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
