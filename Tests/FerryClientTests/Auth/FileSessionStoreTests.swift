import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Testing

@Suite("FileSessionStore")
struct FileSessionStoreTests {
    @Test("the session file is mode 0600, also after being replaced, and no temporary file is left")
    func ownerOnly() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(fileURL: folder.url.appending(path: "nested/session.json"))
        let server = FakeAuthServer()
        try store.save(server.issueSession())
        #expect(try mode(of: store.fileURL) == 0o600)
        #expect(try mode(of: store.fileURL.deletingLastPathComponent()) == 0o700)
        let replacement = server.issueSession(email: "grace@example.com")
        try store.save(replacement)
        #expect(try mode(of: store.fileURL) == 0o600)
        #expect(try store.load() == replacement)
        let names = try FileManager.default.contentsOfDirectory(atPath: store.fileURL.deletingLastPathComponent().path)
        #expect(names == ["session.json"])
    }

    @Test("a missing file is no session; deleting twice is fine")
    func missing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(fileURL: folder.url.appending(path: "session.json"))
        #expect(try store.load() == nil)
        try store.save(FakeAuthServer().issueSession())
        try store.delete()
        try store.delete()
        #expect(try store.load() == nil)
    }

    @Test("a corrupt file is session_store_failed")
    func corrupt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "session.json")
        try Data("{\"access_token\":".utf8).write(to: file)
        let error = #expect(throws: AuthError.self) { try FileSessionStore(fileURL: file).load() }
        #expect(error?.code == .sessionStoreFailed)
    }

    private func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o777
    }
}
