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
        let probe = try? ChildProcess(
            "python3", arguments: ["-c", "import supabase_auth"], environment: ProcessInfo.processInfo.environment,
            standardOutput: .null, standardError: .null
        )
        return probe?.waitUntilExit() == 0
    }

    @Test("supabase-py signs up, signs in, refreshes, updates and signs out unchanged", arguments: TestEngine.available)
    func supabasePy(_ engine: TestEngine) async throws {
        guard Self.isSupabasePyInstalled else {
            print("⚠︎ Skipping the supabase-py check: python3 cannot import supabase_auth (scripts/test.sh installs it from PyPI).")
            return
        }
        try await LiveServer.with(engine, configure: { $0.useFastPasswordHashing() }) { server in
            let process = try ChildProcess(
                "python3", arguments: [Self.script, server.baseURL.absoluteString, server.server.keys.anonKey],
                environment: ProcessInfo.processInfo.environment, standardError: .inherit
            )
            // Read on a thread of its own: the pipe must drain while the script runs.
            let text = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(returning: String(decoding: process.standardOutput!.readDataToEndOfFile(), as: UTF8.self))
                }
            }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.contains("ok sign_out clears the session"), "\(text)")
        }
    }
}
