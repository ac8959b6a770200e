@testable import FerryVault
import Foundation
import Testing

extension VaultTests {
    @Suite("Vault settings, templates, credentials and auto-sync")
    struct VaultSettingsTests {
        @Test("the template fills {{date}}, {{numFiles}}, {{hostname}} and {{files}}")
        func template() {
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            #expect(CommitMessageTemplate().render(files: ["a.md"], hostname: "mac", date: date) == "vault backup: 2023-11-14 22:13:20")
            #expect(CommitMessageTemplate("{{numFiles}} on {{hostname}}: {{files}}").render(files: ["a.md", "b.md"], hostname: "mac", date: date)
                == "2 on mac: a.md, b.md")
        }

        @Test("auto-sync intervals under 10 seconds are refused")
        func interval() async throws {
            #expect(throws: VaultError.self) { try AutoSyncSettings.validatedInterval(9) }
            #expect(try AutoSyncSettings.validatedInterval(10) == 10)
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            #expect(throws: VaultError.self) { try VaultAutoSync(vault: device.vault, intervalSeconds: 5) }
        }

        @Test("pull-on-open syncs at once and reports; cancelling stops the loop")
        func pullOnOpen() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["a.md": "alpha\n"])
            let device = try await fixture.makeDevice("laptop")
            try await fixture.seed(["b.md": "beta\n"])
            let auto = try VaultAutoSync(vault: device.vault, intervalSeconds: 60, pullOnOpen: true, options: device.options)
            let (reports, continuation) = AsyncStream<Result<VaultSyncReport, VaultError>>.makeStream()
            let task = Task { await auto.run { continuation.yield($0) } }
            var first: Result<VaultSyncReport, VaultError>?
            for await outcome in reports {
                first = outcome
                break
            }
            task.cancel()
            await task.value
            #expect(try first?.get().pulledCommits == 1)
            #expect(try device.read("b.md") == "beta\n")
        }

        @Test("credentials are stored with mode 0600 and never described with the token")
        func credentials() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let profile = fixture.makeProfile("laptop")
            try profile.credentialStore.save(VaultCredentials(token: "ghp_secret_value"))
            let file = profile.folder.appending(path: "vault-credentials.json")
            let mode = try FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try profile.credentialStore.load().token == "ghp_secret_value")
            #expect(!"\(try profile.credentialStore.load())".contains("ghp_secret_value"))
        }

        @Test("settings persist in the profile and older files without new keys still load")
        func persistence() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let profile = fixture.makeProfile("laptop")
            try FileManager.default.createDirectory(at: profile.folder, withIntermediateDirectories: true)
            try Data(#"{"vault_path": "/tmp/x"}"#.utf8).write(to: profile.settingsStore.fileURL)
            let settings = try profile.settingsStore.load()
            #expect(settings.vaultPath == "/tmp/x")
            #expect(settings.commitMessageTemplate == CommitMessageTemplate.defaultText)
            #expect(settings.autoSync == AutoSyncSettings())
        }
    }
}
