@testable import FerryVault
import FerryTesting
import Foundation
import Testing

extension VaultTests {
    /// Each discovery step finds the repository, and diagnostics say where.
    @Suite("Repository discovery")
    struct RepositoryDiscoveryTests {
        @Test("an inline .git folder")
        func inline() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try await GitTool.run(["init", "--quiet", device.vault.folder.path(percentEncoded: false)])
            let found = try #require(device.vault.discoverRepository().location)
            #expect(found.kind == .inline)
            #expect(RepositoryLocator.samePath(found.gitDirectory, device.vault.folder.appending(path: ".git")))
            let diagnostics = device.vault.diagnose()
            #expect(diagnostics.repositoryFound && diagnostics.repositoryKind == .inline)
            #expect(diagnostics.line.contains("repo=found(inline)"))
        }

        @Test("a .git file pointing at a git folder elsewhere")
        func gitFile() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            let elsewhere = fixture.root.url.appending(path: "elsewhere.git")
            try await GitTool.run(["init", "--quiet", "--separate-git-dir", elsewhere.path(percentEncoded: false), device.vault.folder.path(percentEncoded: false)])
            let found = try #require(device.vault.discoverRepository().location)
            #expect(found.kind == .gitFile)
            #expect(RepositoryLocator.samePath(found.gitDirectory, elsewhere))
            #expect(device.vault.diagnose().repositoryKind == .gitFile)
        }

        @Test("a separate git folder in the profile's storage whose core.worktree is the vault; nothing inside the vault")
        func storage() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            let created = try device.vault.initialiseRepository(storage: .separate)
            #expect(!FileManager.default.fileExists(atPath: device.vault.folder.appending(path: ".git").path(percentEncoded: false)))
            let found = try #require(device.vault.discoverRepository().location)
            #expect(found.kind == .storage)
            #expect(RepositoryLocator.samePath(found.gitDirectory, created.gitDirectory))
            #expect(found.gitDirectory.path(percentEncoded: false).contains("git-storage/\(device.vault.storageKey).git"))
            // The real git agrees the work tree is the vault.
            let worktree = try await GitTool.run(["--git-dir", found.gitDirectory.path(percentEncoded: false), "config", "core.worktree"])
            #expect(RepositoryLocator.samePath(URL(filePath: worktree), device.vault.folder))
            let diagnostics = device.vault.diagnose()
            #expect(diagnostics.repositoryKind == .storage && diagnostics.storageRepositoryCount == 1)
        }

        @Test("legacy names in the storage", arguments: [0, 1, 2])
        func legacy(_ which: Int) async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            let legacy = device.profile.locator.legacyLocations(for: device.vault.folder)[which]
            try await GitTool.run(["init", "--quiet", "--bare", legacy.path(percentEncoded: false)])
            let found = try #require(device.vault.discoverRepository().location)
            #expect(found.kind == .legacy)
            #expect(RepositoryLocator.samePath(found.gitDirectory, legacy))
            #expect(device.vault.diagnose().repositoryKind == .legacy)
        }

        @Test("a scan of the storage finds a repository by its core.worktree, skipping others")
        func scan() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            let storage = device.profile.locator.storage
            let other = storage.appending(path: "aaa-someone-else.git"), ours = storage.appending(path: "zzz-renamed.git")
            for repository in [other, ours] { try await GitTool.run(["init", "--quiet", "--bare", repository.path(percentEncoded: false)]) }
            try await GitTool.run(["--git-dir", other.path(percentEncoded: false), "config", "core.worktree", fixture.root.url.appending(path: "not-this-one").path(percentEncoded: false)])
            try await GitTool.run(["--git-dir", ours.path(percentEncoded: false), "config", "core.worktree", device.vault.folder.path(percentEncoded: false)])
            let discovery = device.vault.discoverRepository()
            let found = try #require(discovery.location)
            #expect(found.kind == .scan)
            #expect(RepositoryLocator.samePath(found.gitDirectory, ours))
            #expect(discovery.storageRepositoryCount == 2)
            #expect(discovery.candidates.count == 2 + 3 + 2, "inline, primary, three legacy names, then both stored repositories")
            let diagnostics = device.vault.diagnose()
            #expect(diagnostics.repositoryKind == .scan && diagnostics.candidates == discovery.candidates)
        }

        @Test("nothing found: repo=missing with an empty storage is the seed's first critical signal")
        func missing() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            let diagnostics = device.vault.diagnose()
            #expect(!diagnostics.repositoryFound)
            #expect(diagnostics.line.contains("repo=missing") && diagnostics.line.contains("gitStorageCount=0"))
            #expect(diagnostics.signals.map(\.code).contains("repo-missing"))
            await #expect(throws: VaultError.self) { try await device.sync() }
        }

        @Test("a sync through a separate git folder behaves as an inline one")
        func syncSeparate() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["a.md": "alpha\n"])
            let device = try await fixture.makeDevice("laptop", storage: .separate)
            #expect(try device.read("a.md") == "alpha\n")
            #expect(!FileManager.default.fileExists(atPath: device.vault.folder.appending(path: ".git").path(percentEncoded: false)))
            try device.write("b.md", "beta\n")
            let report = try await device.sync()
            #expect(report.committedFiles == ["b.md"] && report.pushed)
            #expect(try await GitTool.tree(gitDirectory: device.gitDirectory) == fixture.remoteTree())
        }

        @Test("a vault whose path has spaces and non-ASCII letters syncs through separate storage")
        func unusualPath() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["a.md": "alpha\n"])
            let profile = fixture.makeProfile("laptop")
            let folder = fixture.root.url.appending(path: "vaults/My Notés", directoryHint: .isDirectory)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let vault = try profile.choose(folder)
            var options = SyncOptions()
            options.hostname = "laptop"
            _ = try await vault.clone(from: fixture.bare.path(percentEncoded: false), storage: .separate, options: options)
            try "beta\n".write(to: folder.appending(path: "b c.md"), atomically: true, encoding: .utf8)
            let report = try await vault.sync(options)
            #expect(report.committedFiles == ["b c.md"] && report.pushed)
            #expect(vault.discoverRepository().location?.kind == .storage)
            #expect(try await GitTool.tree(gitDirectory: #require(vault.discoverRepository().location).gitDirectory) == fixture.remoteTree())
        }
    }
}
