import FerrySecurity
import Foundation
import Testing

@Suite("OwnerOnlyFile")
struct OwnerOnlyFileTests {
    @Test("create writes a 0600 file once and leaves an existing file untouched")
    func createOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-security-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "nested/device.key")
        #expect(try OwnerOnlyFile.create(Data("first".utf8), at: file))
        #expect(try OwnerOnlyFile.create(Data("second".utf8), at: file) == false)
        #expect(try Data(contentsOf: file) == Data("first".utf8))
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["device.key"])
    }
}
