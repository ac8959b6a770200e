import FerryServer
import FerryTesting
import Foundation
import Testing

/// supabase-py's `storage3`, unchanged, against `/storage/v1` on both engines (installed from PyPI by
/// `scripts/test.sh`; supabase-swift and supabase-js need registries this machine cannot reach).
@Suite("Supabase Storage compatibility")
struct StorageCompatibilityTests {
    static let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Compatibility/storage3_check.py").path()

    @Test("storage3 uploads, downloads, signs, lists and removes in a schema bucket; another account is refused; a TUS upload in two halves completes",
          arguments: TestEngine.available)
    func storage3(_ engine: TestEngine) async throws {
        guard PythonCheck.canImport("storage3, supabase_auth") else {
            print("⚠︎ Skipping the storage3 check: python3 cannot import storage3 (scripts/test.sh installs it from PyPI).")
            return
        }
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let (status, text) = try await PythonCheck.run(Self.script, arguments: [server.baseURL.absoluteString, server.server.keys.anonKey])
            #expect(status == 0, "\(text)")
            #expect(text.contains("ok storage3"), "\(text)")
        }
    }
}
