import FerryTesting
@testable import FerryVault
import Foundation
import Logging
import Testing

/// A bare repository on disk and any number of devices, each a profile with a vault cloned from it.
struct VaultFixture {
    /// One device: its profile, its vault and its host name.
    struct Device {
        let profile: VaultProfile
        let vault: Vault
        let hostname: String

        var options: SyncOptions {
            var options = SyncOptions()
            options.hostname = hostname
            return options
        }

        func sync() async throws -> VaultSyncReport {
            try await vault.sync(options)
        }

        func write(_ path: String, _ text: String) throws {
            let url = vault.folder.appending(path: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }

        func read(_ path: String) throws -> String {
            try String(contentsOf: vault.folder.appending(path: path), encoding: .utf8)
        }

        func delete(_ path: String) throws {
            try FileManager.default.removeItem(at: vault.folder.appending(path: path))
        }

        var gitDirectory: URL {
            get throws { try #require(vault.discoverRepository().location).gitDirectory }
        }

        /// Every note (path → text), `.git` aside.
        func notes() throws -> [String: String] {
            var notes: [String: String] = [:]
            let root = vault.folder.standardizedFileURL.path(percentEncoded: false)
            let enumerator = FileManager.default.enumerator(atPath: root)
            while let relative = enumerator?.nextObject() as? String {
                if relative == ".git" || relative.hasPrefix(".git/") { continue }
                var isFolder: ObjCBool = false
                let full = vault.folder.appending(path: relative).path(percentEncoded: false)
                if FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue {
                    notes[relative] = try String(contentsOfFile: full, encoding: .utf8)
                }
            }
            return notes
        }
    }

    let root: TemporaryFolder
    let bare: URL

    init() async throws {
        root = try TemporaryFolder()
        bare = root.url.appending(path: "remote.git", directoryHint: .isDirectory)
        try await GitTool.makeBare(at: bare)
    }

    func remove() {
        root.remove()
    }

    /// A profile (no vault yet) named `name`.
    func makeProfile(_ name: String) -> VaultProfile {
        VaultProfile(folder: root.url.appending(path: "profiles/\(name)", directoryHint: .isDirectory), logger: .testing)
    }

    /// A device whose vault folder exists (empty), chosen but without a repository.
    func makeEmptyDevice(_ name: String) throws -> Device {
        let profile = makeProfile(name)
        let folder = root.url.appending(path: "vaults/\(name)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return Device(profile: profile, vault: try profile.choose(folder), hostname: name)
    }

    /// A device with the bare repository cloned into its vault.
    func makeDevice(_ name: String, storage: RepositoryStorage = .inline) async throws -> Device {
        let device = try makeEmptyDevice(name)
        _ = try await device.vault.clone(from: bare.path(percentEncoded: false), storage: storage, options: device.options)
        return device
    }

    /// Runs `body` with a fixture whose remote holds `notes` and one device ("laptop") cloned from it, then removes it.
    static func withDevice(seeded notes: [String: String] = ["a.md": "alpha\n"], _ body: (VaultFixture, Device) async throws -> Void) async throws {
        let fixture = try await VaultFixture()
        defer { fixture.remove() }
        try await fixture.seed(notes)
        try await body(fixture, try await fixture.makeDevice("laptop"))
    }

    /// Seeds the bare repository with `notes` through the real `git` program.
    func seed(_ notes: [String: String]) async throws {
        let work = root.url.appending(path: "seed-\(UUID().uuidString)", directoryHint: .isDirectory)
        try await GitTool.run(["clone", "--quiet", bare.path(percentEncoded: false), work.path(percentEncoded: false)])
        for (path, text) in notes {
            let url = work.appending(path: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try await GitTool.run(["add", "-A"], in: work)
        try await GitTool.run(["commit", "--quiet", "-m", "seed"], in: work)
        try await GitTool.run(["push", "--quiet", "origin", "HEAD:main"], in: work)
    }

    /// The remote's tree.
    func remoteTree() async throws -> String {
        try await GitTool.tree(gitDirectory: bare, revision: "main")
    }
}

/// Ten numbered lines, so edits far apart do not overlap.
func numberedLines(_ replacements: [Int: String] = [:]) -> String {
    (1...10).map { replacements[$0] ?? "line \($0)" }.joined(separator: "\n") + "\n"
}
