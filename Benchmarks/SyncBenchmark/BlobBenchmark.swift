import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation

/// `ferry-benchmark --blobs [--megabytes M] [--chunk-mib N] [--postgres URL [--blob-files]] [--json]`: one file of M MiB (default 256) moved the way an
/// app moves it — attached on one device (copied into its cache and hashed), uploaded by a sync, downloaded by another
/// device's sync (hashed again) — against the disk doing the least that work needs: copying the file once (the median of
/// three copies). Each step's ratio is its wall time over that copy's; CPU seconds of this process (client and server) stand beside them.
enum BlobBenchmark {
    static let schema = """
        version: 1
        collections:
          recordings:
            fields:
              title: text
              audio: blob
        """

    struct Step {
        var name: String
        var wall: Double
        var cpu: Double
    }

    static func run(_ options: BenchmarkOptions, engine: TestEngine) async throws -> (table: String, json: String) {
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-blob-benchmark-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appending(path: "recording.m4a")
        try TestFiles.write(source.path(), megabytes: options.megabytes, seed: 7)

        // The copy is the yardstick of every ratio, and one copy on this shared disk varied twofold between runs: the
        // median of three is what the ratios divide by.
        let copies = try (0..<3).map { index in
            try measure("copy the file once (the disk, median of 3)") {
                try copyFile(source, to: folder.appending(path: "copy-\(index)"))
            }
        }
        let copy = copies.sorted { $0.wall < $1.wall }[1]
        let blobFolder = options.blobFiles ? folder.appending(path: "server-blobs").path() : nil
        return try await LiveServer.with(engine, schema: schema, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.blobDirectory = blobFolder
        }) { server in
            let endpoint = BenchmarkDevice.Endpoint(baseURL: server.baseURL, anonKey: server.server.keys.anonKey)
            let email = "blobs-\(UUID().uuidString.prefix(8).lowercased())@example.com", password = "correct horse battery"
            let phone = try await BenchmarkDevice.signIn(
                endpoint, email: email, password: password, signUp: true, fileURL: folder.appending(path: "phone.sqlite"),
                blobChunkSize: options.blobChunkMiB.map { $0 << 20 }
            )
            let pad = try await BenchmarkDevice.signIn(
                endpoint, email: email, password: password, signUp: false, fileURL: folder.appending(path: "pad.sqlite"),
                blobChunkSize: options.blobChunkMiB.map { $0 << 20 }
            )
            var reference: BlobReference?
            let attach = try measure("attach (copy into the cache, hash)") {
                reference = try phone.store.attachFile(at: source, contentType: "audio/mp4")
                try phone.store.save(collection: "recordings", fields: ["title": "Benchmark", "audio": reference!.json])
            }
            let upload = try await measureAsync("upload (sync: PATCH in chunks, server hashes)") {
                let report = try await phone.running { try await phone.engine.sync() }
                guard report.blobsUploaded == 1 else { throw BenchmarkFailure("the upload did not finish: \(report)") }
            }
            let download = try await measureAsync("download (sync: ranged GETs, device hashes)") {
                let report = try await pad.running { try await pad.engine.sync() }
                guard report.blobsDownloaded == 1 else { throw BenchmarkFailure("the download did not finish: \(report)") }
            }
            guard let reference, try pad.store.cachedFile(for: reference) != nil else { throw BenchmarkFailure("the file did not arrive") }
            let steps = [attach, upload, download]
            var table = """

                | Blobs (\(options.megabytes) MiB, server on \(engine)\(options.blobFiles ? ", blobs in files" : "")) | wall | MiB/s | × the copy | CPU s |
                |---|---:|---:|---:|---:|
                | \(copy.name) | \(format(copy.wall)) s | \(format(Double(options.megabytes) / copy.wall, 0)) | 1.00 | \(format(copy.cpu)) |
                """
            for step in steps {
                table += "\n| \(step.name) | \(format(step.wall)) s | \(format(Double(options.megabytes) / step.wall, 0)) | \(format(step.wall / copy.wall)) | \(format(step.cpu)) |"
            }
            let json: [String: Any] = [
                "engine": "\(engine)", "blob_files": options.blobFiles, "megabytes": options.megabytes, "copy_seconds": copy.wall, "copies_seconds": copies.map(\.wall),
                "chunk_mib": options.blobChunkMiB ?? SyncEngine.Configuration.defaultBlobChunkSize >> 20,
                "attach_ratio": attach.wall / copy.wall, "upload_ratio": upload.wall / copy.wall, "download_ratio": download.wall / copy.wall,
                "attach_cpu_seconds": attach.cpu, "upload_cpu_seconds": upload.cpu, "download_cpu_seconds": download.cpu,
            ]
            let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
            return (table, String(decoding: data, as: UTF8.self))
        }
    }

    private static func measure(_ name: String, _ body: () throws -> Void) throws -> Step {
        let (start, cpu) = (ProcessMetrics.monotonicNanoseconds(), ProcessMetrics.cpuSeconds())
        try body()
        return step(name, start: start, cpu: cpu)
    }

    private static func measureAsync(_ name: String, _ body: () async throws -> Void) async throws -> Step {
        let (start, cpu) = (ProcessMetrics.monotonicNanoseconds(), ProcessMetrics.cpuSeconds())
        try await body()
        return step(name, start: start, cpu: cpu)
    }

    /// The step since `start`; its window on the monotonic clock goes to stderr, for `perf report --time` (record with
    /// `-k CLOCK_MONOTONIC`).
    private static func step(_ name: String, start: UInt64, cpu: Double) -> Step {
        let end = ProcessMetrics.monotonicNanoseconds()
        FileHandle.standardError.write(Data("\(name): \(String(format: "%.6f,%.6f", Double(start) / 1e9, Double(end) / 1e9))\n".utf8))
        return Step(name: name, wall: Double(end - start) / 1e9, cpu: ProcessMetrics.cpuSeconds() - cpu)
    }

    /// Copies in 4 MiB chunks and syncs the copy to disk, as the cache and the server's store do.
    private static func copyFile(_ source: URL, to target: URL) throws {
        _ = FileManager.default.createFile(atPath: target.path(), contents: nil)
        let input = try FileHandle(forReadingFrom: source), output = try FileHandle(forWritingTo: target)
        defer {
            try? input.close()
            try? output.close()
        }
        while let chunk = try input.readChunk(upToCount: 4 << 20) { try output.write(contentsOf: chunk) }
        try output.synchronize()
    }

    private static func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

    struct BenchmarkFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
