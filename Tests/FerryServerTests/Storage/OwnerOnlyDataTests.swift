import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The data folder holds emails, password hashes and the signing key: the server makes it its owner's only.
@Suite("Storage: owner-only data")
struct OwnerOnlyDataTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("a data folder made world-readable is tightened at start: folder and keys/ 0700, database, WAL, SHM and keys 0600")
    func tightenedAtStart() async throws {
        // The test database's folder is made with the umask (0755), as an operator's `mkdir` would.
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: AuthHarness.fastHashing) { server in
            let folder = server.configuration.dataDirectory
            let auth = AuthHarness(server: server)
            _ = try await auth.signUp(uniqueEmail("perm"))
            #expect(try Self.mode(folder) == 0o700)
            #expect(try Self.mode(folder + "/keys") == 0o700)
            for file in ["ferry.sqlite", "ferry.sqlite-wal", "ferry.sqlite-shm", "keys/jwt-secret", "keys/anon-key"] {
                let path = folder + "/" + file
                guard FileManager.default.fileExists(atPath: path) else {
                    Issue.record("\(file) is missing")
                    continue
                }
                #expect(try Self.mode(path) == 0o600, "\(file)")
            }
        }
    }
}
