@testable import FerryVault
import FerryTesting
import Foundation
import Testing

extension VaultTests {
    /// A stale `index.lock` is recovered, a fresh one is respected, and a vault without origin still commits.
    @Suite("Sync recovery and reporting")
    struct SyncRecoveryTests {
        @Test("an index.lock left by a crashed run is removed and the sync goes on")
        func staleLock() async throws {
            try await VaultFixture.withDevice { _, device in
                let lock = try device.gitDirectory.appending(path: "index.lock")
                _ = FileManager.default.createFile(atPath: lock.path(percentEncoded: false), contents: Data())
                try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: lock.path(percentEncoded: false))
                try device.write("b.md", "beta\n")
                let report = try await device.sync()
                #expect(report.recoveredStaleLock)
                #expect(report.committedFiles == ["b.md"] && report.pushed)
                #expect(report.summary.hasPrefix("removed a stale index.lock"))
                #expect(!FileManager.default.fileExists(atPath: lock.path(percentEncoded: false)))
            }
        }

        @Test("a fresh index.lock means another git is working: sync fails with repository_locked and changes nothing")
        func freshLock() async throws {
            try await VaultFixture.withDevice { _, device in
                let lock = try device.gitDirectory.appending(path: "index.lock")
                _ = FileManager.default.createFile(atPath: lock.path(percentEncoded: false), contents: Data())
                try device.write("b.md", "beta\n")
                let error = await #expect(throws: VaultError.self) { try await device.sync() }
                #expect(error?.code == .repositoryLocked)
                #expect(FileManager.default.fileExists(atPath: lock.path(percentEncoded: false)))
                #expect(device.vault.diagnose().signals.map(\.code).contains("index-locked"))
            }
        }

        @Test("without any origin a sync commits locally and says nothing was pulled or pushed")
        func noOrigin() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try device.vault.initialiseRepository()
            try device.write("a.md", "alpha\n")
            let report = try await device.sync()
            #expect(report.committedFiles == ["a.md"])
            #expect(report.origin.source == .none)
            #expect(report.summary == "committed 1 file, no origin configured, nothing pulled or pushed")
        }

        @Test("the commit message template and author are used, with the host trailer")
        func template() async throws {
            try await VaultFixture.withDevice { fixture, device in
                try device.profile.settingsStore.update { settings in
                    settings.commitMessageTemplate = "{{hostname}}: {{numFiles}} files ({{files}})"
                    settings.author = VaultAuthor(name: "Ada", email: "ada@example.com")
                }
                try device.write("b.md", "beta\n")
                try device.write("c.md", "gamma\n")
                _ = try await device.sync()
                let subject = try await GitTool.run(["--git-dir", fixture.bare.path(percentEncoded: false), "log", "-1", "--format=%s|%an|%ae", "main"])
                #expect(subject == "laptop: 2 files (b.md, c.md)|Ada|ada@example.com")
                let body = try await GitTool.run(["--git-dir", fixture.bare.path(percentEncoded: false), "log", "-1", "--format=%b", "main"])
                #expect(body.contains("Ferry-Host: laptop"))
            }
        }

        @Test("pushing to a remote that does not exist fails with a message that says what to do")
        func missingRemote() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try device.vault.initialiseRepository()
            try device.vault.setOrigin(fixture.root.url.appending(path: "nowhere.git").path(percentEncoded: false))
            try device.write("a.md", "alpha\n")
            let error = await #expect(throws: VaultError.self) { try await device.sync() }
            #expect(error?.message.isEmpty == false)
            #expect(error?.code != nil)
        }

        @Test("a push that is not a fast-forward is mapped from libgit2's own error")
        func nonFastForward() async throws {
            try await VaultFixture.withDevice { fixture, device in
                try await fixture.seed(["elsewhere.md": "pushed by someone else\n"])
                try device.write("b.md", "beta\n")
                let repository = try GitRepository.open(gitDirectory: device.gitDirectory, workTree: device.vault.folder)
                _ = try repository.stageAll()
                _ = try repository.commitIndex(message: "local", author: .default)
                let error = #expect(throws: VaultError.self) {
                    try repository.push(branch: "main", to: "origin", session: RemoteSession(credentials: VaultCredentials(), maxAttempts: 1))
                }
                #expect(error?.code == .rejectedNonFastForward)
                // sync fetches, merges and pushes instead.
                let report = try await device.sync()
                #expect(report.pulledCommits == 1 && report.pushed)
            }
        }

        @Test("a second sync of the same vault while one runs fails with repository_locked instead of racing it")
        func concurrentSync() async throws {
            try await VaultFixture.withDevice { _, device in
                let held = try SyncLock(gitDirectory: device.gitDirectory)
                defer { held.release() }
                let error = await #expect(throws: VaultError.self) { try await device.sync() }
                #expect(error?.code == .repositoryLocked)
            }
        }

        @Test("a vault folder that disappeared is reported as such, by sync and by diagnostics")
        func folderGone() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try FileManager.default.removeItem(at: device.vault.folder)
            let error = await #expect(throws: VaultError.self) { try await device.sync() }
            #expect(error?.code == .vaultMissing)
            let diagnostics = device.vault.diagnose()
            #expect(!diagnostics.folderAccessible)
            #expect(diagnostics.signals.map(\.code).contains("vault-folder-missing"))
        }
    }
}
