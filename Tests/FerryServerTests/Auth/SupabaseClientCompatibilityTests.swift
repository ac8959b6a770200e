import FerryServer
import FerryTesting
import Foundation
import Testing

/// A real Supabase client library against a live Ferry server: supabase-py's `supabase_auth`, installed from
/// PyPI by `scripts/test.sh` (supabase-swift and supabase-js need registries this machine cannot reach).
@Suite("Supabase client compatibility")
struct SupabaseClientCompatibilityTests {
    static let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Compatibility/supabase_py_check.py").path()

    static var isSupabasePyInstalled: Bool {
        let probe = Process()
        probe.executableURL = URL(filePath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import supabase_auth"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    @Test("supabase-py signs up, signs in, refreshes, updates and signs out unchanged", arguments: TestEngine.available)
    func supabasePy(_ engine: TestEngine) async throws {
        guard Self.isSupabasePyInstalled else {
            print("⚠︎ Skipping the supabase-py check: python3 cannot import supabase_auth (scripts/test.sh installs it from PyPI).")
            return
        }
        try await LiveServer.with(engine, configure: { $0.useFastPasswordHashing() }) { server in
            let process = Process()
            process.executableURL = URL(filePath: "/usr/bin/env")
            process.arguments = ["python3", Self.script, server.baseURL.absoluteString, server.server.keys.anonKey]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            // Read on a thread of its own: the pipe must drain while the script runs.
            let text = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(returning: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
                }
            }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.contains("ok sign_out clears the session"), "\(text)")
        }
    }
}
