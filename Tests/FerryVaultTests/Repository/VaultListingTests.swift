@testable import FerryVault
import FerryTesting
import Foundation
import Testing

extension VaultTests {
    /// One vault at a time, and folders-first listing.
    @Suite("Vault folder and listing")
    struct VaultListingTests {
        @Test("child folders first, then notes; hidden entries left out; a subfolder never lists its parent")
        func listing() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try device.vault.initialiseRepository()
            for path in ["b note.md", "A note.md", "Zeta/z.md", "alpha/one.md", "alpha/Inner/deep.md", ".hidden.md"] {
                try device.write(path, "x\n")
            }
            let root = try device.vault.list()
            #expect(root.folders == ["alpha", "Zeta"])
            #expect(root.notes == ["A note.md", "b note.md"])
            let alpha = try device.vault.list("alpha")
            #expect(alpha.folder == "alpha")
            #expect(alpha.folders == ["Inner"] && alpha.notes == ["one.md"])
            #expect(throws: VaultError.self) { try device.vault.list("../laptop") }
            #expect(throws: VaultError.self) { try device.vault.list("missing") }
        }

        @Test("choosing another folder replaces the vault; a missing folder is refused")
        func choose() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            let other = fixture.root.url.appending(path: "vaults/other")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            try device.profile.choose(other)
            #expect(RepositoryLocator.samePath(try device.profile.current().folder, other))
            #expect(throws: VaultError.self) { try device.profile.choose(fixture.root.url.appending(path: "absent")) }
            #expect(RepositoryLocator.samePath(try device.profile.current().folder, other))
        }

        @Test("init refuses to replace an existing repository")
        func initTwice() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let device = try fixture.makeEmptyDevice("laptop")
            try device.vault.initialiseRepository()
            let error = #expect(throws: VaultError.self) { try device.vault.initialiseRepository(storage: .separate) }
            #expect(error?.code == .repositoryExists)
        }
    }
}
