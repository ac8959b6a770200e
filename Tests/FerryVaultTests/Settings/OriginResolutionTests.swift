@testable import FerryVault
import FerryTesting
import Foundation
import Testing

extension VaultTests {
    /// The origin fallback chain, its write-back, and the source diagnostics report.
    @Suite("Origin resolution")
    struct OriginResolutionTests {
        @Test("the vault's own setting comes first")
        func vaultSetting() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try device.profile.setGlobalOrigin("https://example.com/global.git")
            try device.vault.setOrigin("https://example.com/own.git")
            #expect(try device.vault.resolveOrigin() == OriginResolution(url: "https://example.com/own.git", source: .vault))
            #expect(device.vault.diagnose().originSource == .vault)
        }

        @Test("then the global default, written back to the vault")
        func global() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try device.profile.setGlobalOrigin("https://example.com/global.git")
            #expect(device.vault.diagnose().originSource == .global)
            #expect(try device.vault.resolveOrigin() == OriginResolution(url: "https://example.com/global.git", source: .global))
            #expect(try device.profile.settingsStore.load().folders[device.vault.path]?.origin == "https://example.com/global.git")
            #expect(device.vault.diagnose().originSource == .vault)
        }

        @Test("then the nearest parent vault's setting, written back to the vault and the global default")
        func parent() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let profile = fixture.makeProfile("laptop")
            let outer = fixture.root.url.appending(path: "vaults/outer"), inner = outer.appending(path: "Work/inner")
            try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
            try profile.choose(outer).setOrigin("https://example.com/outer.git")
            try profile.choose(outer.appending(path: "Work")).setOrigin("https://example.com/work.git")
            let vault = try profile.choose(inner)
            #expect(vault.diagnose().originSource == .parent)
            #expect(try vault.resolveOrigin() == OriginResolution(url: "https://example.com/work.git", source: .parent))
            let settings = try profile.settingsStore.load()
            #expect(settings.folders[vault.path]?.origin == "https://example.com/work.git")
            #expect(settings.globalOrigin == "https://example.com/work.git")
        }

        @Test("then the repository's remote.origin.url, written back")
        func repository() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try await GitTool.run(["init", "--quiet", device.vault.folder.path(percentEncoded: false)])
            try await GitTool.run(["remote", "add", "origin", "https://example.com/from-config.git"], in: device.vault.folder)
            #expect(device.vault.diagnose().originSource == .repository)
            #expect(try device.vault.resolveOrigin() == OriginResolution(url: "https://example.com/from-config.git", source: .repository))
            let settings = try device.profile.settingsStore.load()
            #expect(settings.folders[device.vault.path]?.origin == "https://example.com/from-config.git")
            #expect(settings.globalOrigin == "https://example.com/from-config.git")
        }

        @Test("nowhere: origin=empty and originSource=none is a critical signal")
        func none() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try await GitTool.run(["init", "--quiet", device.vault.folder.path(percentEncoded: false)])
            #expect(try device.vault.resolveOrigin() == OriginResolution(url: nil, source: .none))
            let diagnostics = device.vault.diagnose()
            #expect(diagnostics.originSource == .none && !diagnostics.globalOriginPresent)
            #expect(diagnostics.line.contains("origin=empty") && diagnostics.line.contains("originSource=none"))
            #expect(diagnostics.signals.map(\.code).contains("origin-empty"))
        }

        @Test("diagnostics show the configured URL and the one after insteadOf")
        func insteadOf() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try await GitTool.run(["init", "--quiet", device.vault.folder.path(percentEncoded: false)])
            try await GitTool.run(["remote", "add", "origin", "gh:ada/notes.git"], in: device.vault.folder)
            try await GitTool.run(["config", "url.https://github.com/.insteadOf", "gh:"], in: device.vault.folder)
            let remote = try #require(device.vault.diagnose().remotes.first)
            #expect(remote.name == "origin" && remote.url == "gh:ada/notes.git")
            #expect(remote.effectiveURL == "https://github.com/ada/notes.git")
        }

        @Test("a URL with a password is refused: tokens go to the credential store")
        func passwordInURL() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            #expect(throws: VaultError.self) { try device.vault.setOrigin("https://ada:ghp_secret@github.com/ada/notes.git") }
        }
    }
}
