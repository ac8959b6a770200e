import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sermon app with the real programs: `ferry serve`, and two `ferry` profiles recording and listening to a sermon.
///
/// It kills a sync at a point in time and reads the server's peak memory, so `scripts/test.sh` runs it alone, after the
/// other tests (with them, a 2-core machine is too loaded for either to mean anything).
@Suite("The sermon app audio, killed and resumed")
struct SermonAudioCrashTests {
    @Test("a sermon recorded offline with notes and 100 MiB of audio: the sync killed halfway resumes (≤ 1.2× the bytes), the other device gets the same hash, and the server's memory stays far below the file's size",
          arguments: TestEngine.available)
    func sermonAudio(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let served = try await ServedProcess.start(database, schema: "tabletnotes.yaml")
            let server = served.process
            defer { server.killIfRunning() }
            let (port, anonKey) = (served.port, served.anonKey)
            let home = database.folder + "/home"
            let phone = DataCommandTests.Device(server: URL(string: served.baseURL)!, apiKey: anonKey, home: home, profile: "phone")
            let pad = DataCommandTests.Device(server: phone.server, apiKey: anonKey, home: home, profile: "pad")
            let email = uniqueEmail("sermon")
            _ = try await phone.ok(["signup", email], password: "correct horse 1")
            _ = try await pad.ok(["login", email], password: "correct horse 1")
            _ = try await phone.ok(["sync"])  // learns the schema; what follows is written offline

            let audio = database.folder + "/sermon.m4a"
            try Self.writeFile(audio, megabytes: 100)
            let expected = try Self.hash(audio)
            // Signing up peaked at scrypt's 128 MiB: start the peak afresh from what the server holds now.
            let baseline = try Self.resetPeakMemory(server.processIdentifier)
            let sermon = try await phone.ok(["put", "sermons", "title=Grace", "date=2026-11-22T10:00:00Z", "audio=@\(audio)"])
            for text in ["opening", "the point"] {
                _ = try await phone.ok(["put", "notes", "sermon_id=\(sermon)", "text=\(text)"])
            }
            let queued = try await phone.json(["blob", "status"])
            let transfers = queued["transfers"] as? [[String: Any]] ?? []
            #expect(transfers.count == 1 && transfers.first?["direction"] as? String == "upload" && transfers.first?["size"] as? Int == 100 << 20)

            // Killed with SIGKILL once about half the file is confirmed (a progress line per chunk, 16 MiB at most).
            let environment = ["FERRY_SERVER": phone.server.absoluteString, "FERRY_API_KEY": anonKey, "FERRY_HOME": home, "FERRY_PROFILE": "phone"]
            let interrupted = try FerryProcess(["sync", "--progress"], environment: environment)
            while let line = await interrupted.waitForLine(startingWith: "progress:"), Self.confirmedMiB(line) < 40 {}
            interrupted.signal(SIGKILL)
            _ = await interrupted.waitForExit()
            let confirmed = try await phone.json(["blob", "status"])["transfers"] as? [[String: Any]] ?? []
            let halfway = confirmed.first?["confirmed"] as? Int ?? 0
            #expect(halfway > 0 && halfway < 100 << 20, "confirmed \(halfway) bytes before the kill")
            #expect(try await pad.json(["sync"])["pulled"] as? Int == 0, "nothing of the sermon is pushed before its audio")

            let finished = try await phone.json(["sync"])
            #expect(finished["blobs_uploaded"] as? Int == 1 && finished["pushed"] as? Int == 3 && finished["rejected"] as? Int == 0)
            let received = try await Self.metric("ferry_blob_bytes_received_total", port: port)
            #expect(received >= Double(100 << 20) && received <= Double(100 << 20) * 1.2, "the server received \(received) bytes for 100 MiB")

            let pulled = try await pad.json(["sync"])
            #expect(pulled["blobs_downloaded"] as? Int == 1 && pulled["pulled"] as? Int == 3)
            #expect(try await pad.ok(["ls", "notes"]).split(separator: "\n").count == 2)
            let copy = database.folder + "/copy.m4a"
            _ = try await pad.ok(["blob", "get", "sermons", sermon, "audio", "-o", copy])
            #expect(try Self.hash(copy) == expected)
            let growth = try Self.peakMemory(server.processIdentifier) - baseline
            #expect(growth < 40 << 20, "the server's peak memory grew by \(growth >> 20) MiB for a 100 MiB file")
            print("the sermon app on \(engine): server resident memory \(baseline >> 20) MiB before, peak +\(growth >> 20) MiB over 100 MiB up and down; received \(Int(received)) bytes (\(String(format: "%.3f", received / Double(100 << 20)))× the file) across the kill")
        }
    }

}

/// `ferry put FIELD=@PATH`, `ferry blob get` and `ferry blob status` refusing what they must.
@Suite("ferry put FIELD=@PATH, blob get, blob status")
struct BlobCommandTests {
    @Test("put FIELD=@PATH refuses a missing file, and blob get a field that holds no file")
    func refusals() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let (phone, _, _) = try await DataCommandTests.Device.pair(server, home: home, name: "blobs")
            _ = try await phone.ok(["sync"])
            let missing = try await phone.run(["put", "sermons", "title=x", "date=2026-11-22T10:00:00Z", "audio=@/nonexistent/file.m4a"])
            #expect(missing.status == 66 && missing.stderr.contains("cannot read the file"))
            let sermon = try await phone.ok(["put", "sermons", "title=@not a file", "date=2026-11-22T10:00:00Z"])
            #expect(try await phone.ok(["get", "sermons", sermon]).contains("@not a file"), "@ means a file only in a blob field")
            let noFile = try await phone.run(["blob", "get", "sermons", sermon, "audio", "-o", home + "/out"])
            #expect(noFile.status == 65 && noFile.stderr.contains("holds no file"))
            #expect(try await phone.ok(["blob", "status"]).contains("No files waiting."))
        }
    }

}

extension SermonAudioCrashTests {
    static func writeFile(_ path: String, megabytes: Int) throws {
        try TestFiles.write(path, megabytes: megabytes, seed: 4)
    }

    static func hash(_ path: String) throws -> String { try TestFiles.sha256(URL(fileURLWithPath: path)) }

    /// The MiB of the current file a `ferry sync --progress` line says are confirmed ("…, file 1a2b3c4d 52.0 MiB of
    /// 100.0 MiB"); 0 before any.
    static func confirmedMiB(_ line: String) -> Double {
        guard let file = line.range(of: ", file ") else { return 0 }
        let words = line[file.upperBound...].split(separator: " ")
        guard words.count >= 3, words[2] == "MiB" else { return 0 }
        return Double(words[1]) ?? 0
    }

    /// The process's peak resident memory (`VmHWM`), in bytes.
    static func peakMemory(_ pid: Int32) throws -> Int {
        try memory(pid, "VmHWM:")
    }

    /// Resets the process's peak resident memory to what it holds now (Linux's `clear_refs` 5), and returns that.
    static func resetPeakMemory(_ pid: Int32) throws -> Int {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        return try memory(pid, "VmRSS:")
    }

    static func memory(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field) })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
    }

    /// A counter of the server's `/metrics` (served to loopback peers).
    static func metric(_ name: String, port: Int) async throws -> Double {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        let line = try #require(String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name + " ") })
        return try #require(Double(line.split(separator: " ")[1]))
    }
}
