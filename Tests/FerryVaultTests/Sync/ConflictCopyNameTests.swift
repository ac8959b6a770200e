@testable import FerryVault
import Foundation
import Testing

extension VaultTests {
    /// The conflict copy's name comes partly from the remote commit (its `Ferry-Host:` trailer or committer name), which
    /// anyone who can push writes: it must always be a file name the disk takes, or one commit stops the vault's syncs.
    @Suite("Conflict copy names")
    struct ConflictCopyNameTests {
        let date = Date(timeIntervalSince1970: 1_795_000_000)

        @Test("a host of any length or characters gives a name of at most 255 bytes, without control characters")
        func hostileHost() {
            for host in [String(repeating: "H", count: 300), String(repeating: "é", count: 300), "line\nbreak\ttab\u{7}", "", "   "] {
                let name = Vault.conflictCopyName(for: "Journal/note.md", host: host, date: date) { _ in false }
                let file = String(name.split(separator: "/").last!)
                #expect(name.hasPrefix("Journal/note (conflict from ") && name.hasSuffix(").md"), "\(name)")
                #expect(file.utf8.count <= 255, "\(file.utf8.count) bytes")
                #expect(!file.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(file.debugDescription)")
            }
        }

        @Test("a long note name is shortened, its extension kept, and the copy numbered when taken")
        func longNote() {
            let stem = String(repeating: "n", count: 250)
            let taken = Set(["\(stem.prefix(10))"])
            var seen: [String] = []
            let name = Vault.conflictCopyName(for: "\(stem).md", host: "mac", date: date) { candidate in
                seen.append(candidate)
                return seen.count < 3 || taken.contains(candidate)
            }
            #expect(name.utf8.count <= 255 && name.hasSuffix(" 3.md") && name.contains("(conflict from mac "), "\(name)")
            // A dot far from the end starts no extension: the rest is the title, cut like the stem.
            let title = "Dr. Smith " + String(repeating: "t", count: 240)
            let copy = Vault.conflictCopyName(for: title, host: String(repeating: "h", count: 80), date: date) { _ in false }
            #expect(copy.utf8.count <= 255 && copy.hasPrefix("Dr. Smith "), "\(copy.utf8.count)")
        }
    }
}
