@testable import FerryVault
import Foundation
import Testing

extension VaultTests {
    /// Two vaults cloned from one bare repository edit, sync in both orders, and converge without losing anything.
    @Suite("Two vaults syncing through one bare repository")
    struct TwoVaultSyncTests {
        /// Syncs `first`, then `second`, then `first` again, and checks they converged on the remote's tree.
        private func converge(_ fixture: VaultFixture, _ first: VaultFixture.Device, _ second: VaultFixture.Device) async throws -> [VaultSyncReport] {
            let reports = [try await first.sync(), try await second.sync(), try await first.sync()]
            let remote = try await fixture.remoteTree()
            #expect(try await GitTool.tree(gitDirectory: first.gitDirectory) == remote)
            #expect(try await GitTool.tree(gitDirectory: second.gitDirectory) == remote)
            #expect(try first.notes() == second.notes())
            for (path, text) in try first.notes() {
                #expect(!text.contains("<<<<<<<") && !text.contains(">>>>>>>") && !text.contains("======="), "conflict markers in \(path)")
            }
            // The real git sees clean work trees: nothing left uncommitted.
            #expect(try await GitTool.run(["--git-dir", first.gitDirectory.path(percentEncoded: false), "--work-tree", first.vault.folder.path(percentEncoded: false), "status", "--porcelain"]).isEmpty)
            #expect(try await GitTool.run(["--git-dir", second.gitDirectory.path(percentEncoded: false), "--work-tree", second.vault.folder.path(percentEncoded: false), "status", "--porcelain"]).isEmpty)
            return reports
        }

        @Test("different notes: both edits arrive everywhere", arguments: [true, false])
        func differentNotes(aFirst: Bool) async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["a.md": "alpha\n", "b.md": "beta\n"])
            let a = try await fixture.makeDevice("laptop"), b = try await fixture.makeDevice("phone")
            try a.write("a.md", "alpha from laptop\n")
            try b.write("b.md", "beta from phone\n")
            try b.write("Ideas/new.md", "a new note\n")
            let reports = try await aFirst ? converge(fixture, a, b) : converge(fixture, b, a)
            #expect(reports.allSatisfy { $0.conflicts.isEmpty })
            #expect(try a.read("a.md") == "alpha from laptop\n")
            #expect(try a.read("b.md") == "beta from phone\n")
            #expect(try a.read("Ideas/new.md") == "a new note\n")
            #expect(reports[0].committedFiles.count >= 1 && reports[0].pushed)
            #expect(reports[1].pulledCommits >= 1 && reports[1].pushed)
        }

        @Test("the same note edited in places far apart merges line by line", arguments: [true, false])
        func nonOverlapping(aFirst: Bool) async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["note.md": numberedLines()])
            let a = try await fixture.makeDevice("laptop"), b = try await fixture.makeDevice("phone")
            try a.write("note.md", numberedLines([2: "line 2 edited on the laptop"]))
            try b.write("note.md", numberedLines([9: "line 9 edited on the phone"]))
            let reports = try await aFirst ? converge(fixture, a, b) : converge(fixture, b, a)
            #expect(reports.allSatisfy { $0.conflicts.isEmpty })
            #expect(try a.read("note.md") == numberedLines([2: "line 2 edited on the laptop", 9: "line 9 edited on the phone"]))
            #expect(try a.notes().count == 1)
        }

        @Test("the same lines edited on both sides: the local note stays, the remote version is written beside it", arguments: [true, false])
        func overlapping(aFirst: Bool) async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["Journal/today.md": numberedLines()])
            let a = try await fixture.makeDevice("laptop"), b = try await fixture.makeDevice("phone")
            try a.write("Journal/today.md", numberedLines([5: "five, said the laptop"]))
            try b.write("Journal/today.md", numberedLines([5: "five, said the phone"]))
            let (first, second) = aFirst ? (a, b) : (b, a)
            let reports = try await converge(fixture, first, second)
            // The second to sync meets the conflict: its own text stays, the first's is beside it, named after the first.
            let conflict = try #require(reports[1].conflicts.first)
            #expect(reports[1].conflicts.count == 1)
            #expect(conflict.path == "Journal/today.md")
            #expect(conflict.kind == .bothModified)
            let copy = try #require(conflict.copyPath)
            #expect(copy.hasPrefix("Journal/today (conflict from \(first.hostname) "))
            #expect(copy.hasSuffix(".md"))
            let secondText = numberedLines([5: "five, said the \(second.hostname)"])
            let firstText = numberedLines([5: "five, said the \(first.hostname)"])
            #expect(try first.read("Journal/today.md") == secondText)
            #expect(try first.read(copy) == firstText)
            #expect(reports[1].summary.contains("1 conflict"))
            #expect(reports[2].conflicts.isEmpty)
        }

        @Test("one side deletes a note the other edited: the edit survives", arguments: [true, false])
        func deleteAgainstEdit(deleterFirst: Bool) async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["draft.md": numberedLines(), "keep.md": "keep\n"])
            let deleter = try await fixture.makeDevice("laptop"), editor = try await fixture.makeDevice("phone")
            try deleter.delete("draft.md")
            try editor.write("draft.md", numberedLines([3: "edited on the phone"]))
            let reports = try await deleterFirst ? converge(fixture, deleter, editor) : converge(fixture, editor, deleter)
            let conflicts = reports.flatMap(\.conflicts)
            #expect(conflicts.count == 1)
            let edited = numberedLines([3: "edited on the phone"])
            #expect(try deleter.notes().values.contains(edited), "the phone's edit is in some note")
        }

        @Test("a peer using the real git pushes; the vault pulls it and pushes its own commit back")
        func realGitPeer() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["a.md": "alpha\n"])
            let device = try await fixture.makeDevice("laptop")
            try await fixture.seed(["from-git.md": "pushed by git\n"])
            try device.write("mine.md", "written in the vault\n")
            let report = try await device.sync()
            #expect(report.pulledCommits == 1)
            #expect(report.committedFiles == ["mine.md"])
            #expect(report.pushed)
            #expect(try device.read("from-git.md") == "pushed by git\n")
            #expect(try await GitTool.tree(gitDirectory: device.gitDirectory) == fixture.remoteTree())
            let log = try await GitTool.run(["--git-dir", fixture.bare.path(percentEncoded: false), "log", "--format=%s", "main"])
            #expect(log.contains("vault backup: "))
        }

        @Test("a sync with nothing to do says so; a second sync after a push is a no-op")
        func upToDate() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await fixture.seed(["a.md": "alpha\n"])
            let device = try await fixture.makeDevice("laptop")
            let report = try await device.sync()
            #expect(report.summary == "already up to date")
            #expect(!report.pushed && report.pulledCommits == 0 && report.committedFiles.isEmpty)
        }
    }
}
