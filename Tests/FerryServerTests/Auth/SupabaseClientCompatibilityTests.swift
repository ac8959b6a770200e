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

    @Test("supabase-py signs up, signs in, refreshes, updates and signs out unchanged; its admin API works with the service-role key only", arguments: TestEngine.available)
    func supabasePy(_ engine: TestEngine) async throws {
        guard PythonCheck.canImport("supabase_auth") else {
            print("⚠︎ Skipping the supabase-py check: python3 cannot import supabase_auth (scripts/test.sh installs it from PyPI).")
            return
        }
        try await LiveServer.with(engine, configure: { $0.useFastPasswordHashing() }) { server in
            let keys = server.server.keys
            let (status, text) = try await PythonCheck.run(Self.script, arguments: [server.baseURL.absoluteString, keys.anonKey, keys.serviceRoleKey])
            #expect(status == 0, "\(text)")
            #expect(text.contains("ok sign_out clears the session"), "\(text)")
            #expect(text.contains("ok admin"), "\(text)")
        }
    }

    static let accountsScript = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Compatibility/supabase_py_accounts_check.py").path()

    @Test("supabase-py signs in with Apple, confirms, signs in and recovers with mailed codes, and generates links", arguments: TestEngine.available)
    func supabasePyAccounts(_ engine: TestEngine) async throws {
        guard PythonCheck.canImport("supabase_auth") else {
            print("⚠︎ Skipping the supabase-py accounts check: python3 cannot import supabase_auth (scripts/test.sh installs it from PyPI).")
            return
        }
        guard try SMTPSink.isReady() else { return }
        try await AppleStandIn.with { apple in
            try await SMTPSink.with { sink in
                try await LiveServer.with(engine, configure: {
                    $0.useFastPasswordHashing()
                    apple.configure(&$0)
                    $0.mail.smtp = try! SMTPConfiguration(url: sink.url, sender: "Ferry <no-reply@example.com>")
                }) { server in
                    let keys = server.server.keys
                    let (status, text) = try await PythonCheck.run(Self.accountsScript, arguments: [
                        server.baseURL.absoluteString, keys.anonKey, keys.serviceRoleKey, apple.baseURL.absoluteString, sink.mailFolder,
                    ])
                    #expect(status == 0, "\(text)")
                    #expect(text.contains("ok accounts"), "\(text)")
                }
            }
        }
    }
}
