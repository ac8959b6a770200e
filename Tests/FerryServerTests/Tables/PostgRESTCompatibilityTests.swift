import FerryServer
import FerryTesting
import Foundation
import Testing

/// supabase-py's PostgREST client (`postgrest`, installed from PyPI by `scripts/test.sh`), unchanged, against a live
/// Ferry server serving the sermon app's schema and seed 000's session secrets: the seed apps' own table calls.
@Suite("PostgREST client compatibility")
struct PostgRESTCompatibilityTests {
    static let compatibility = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Compatibility")
    static let examples = compatibility.deletingLastPathComponent().deletingLastPathComponent().appending(path: "Examples")

    @Test("supabase-py's postgrest inserts, upserts, updates, deletes, embeds, counts and filters unchanged", arguments: TestEngine.available)
    func postgrestPy(_ engine: TestEngine) async throws {
        guard PythonCheck.canImport("postgrest, supabase_auth") else {
            print("⚠︎ Skipping the postgrest check: python3 cannot import postgrest (scripts/test.sh installs it from PyPI).")
            return
        }
        try await LiveServer.with(engine, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.schemaFiles = [
                Self.examples.appending(path: "tabletnotes.yaml").path(), Self.compatibility.appending(path: "rest_schema.yaml").path(),
            ]
        }) { server in
            let keys = server.server.keys
            let (status, text) = try await PythonCheck.run(
                Self.compatibility.appending(path: "postgrest_check.py").path(),
                arguments: [server.baseURL.absoluteString, keys.anonKey, keys.serviceRoleKey]
            )
            #expect(status == 0, "\(text)")
            #expect(text.contains("ok all"), "\(text)")
        }
    }
}
