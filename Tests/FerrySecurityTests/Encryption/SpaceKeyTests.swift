@testable import FerrySecurity
import Foundation
import Testing

@Suite("SpaceKey")
struct SpaceKeyTests {
    @Test("a new key has 32 random bytes and the version asked for")
    func generate() throws {
        let first = try SpaceKey.generate()
        let second = try SpaceKey.generate(version: 2)
        #expect(first.version == 1)
        #expect(second.version == 2)
        #expect(first.rawRepresentation.count == 32)
        #expect(first.rawRepresentation != second.rawRepresentation)
    }

    @Test("a key restores from its raw bytes and compares equal, version included")
    func restore() throws {
        let key = try SpaceKey.generate(version: 3)
        let restored = try SpaceKey(rawRepresentation: key.rawRepresentation, version: 3)
        #expect(restored == key)
        #expect(try SpaceKey(rawRepresentation: key.rawRepresentation, version: 4) != key)
    }

    @Test("raw bytes of another length are invalid_key_length", arguments: [0, 16, 31, 33, 64])
    func invalidLength(count: Int) {
        let error = #expect(throws: EncryptionError.self) { try SpaceKey(rawRepresentation: Data(count: count), version: 1) }
        #expect(error?.code == .invalidKeyLength)
        #expect(error?.message.contains("32 bytes") == true)
    }

    @Test("a version below 1 is invalid_key_version", arguments: [0, -1, Int.min])
    func invalidVersion(version: Int) {
        let error = #expect(throws: EncryptionError.self) { try SpaceKey(rawRepresentation: Data(count: 32), version: version) }
        #expect(error?.code == .invalidKeyVersion)
        #expect(throws: EncryptionError.self) { try SpaceKey.generate(version: version) }
    }

    @Test("printing or dumping a key shows its version, never its bytes")
    func redaction() throws {
        let key = try SpaceKey.generate(version: 7)
        let secret = key.rawRepresentation.base64EncodedString()
        var dumped = ""
        dump(key, to: &dumped)
        for text in [String(describing: key), String(reflecting: key), dumped] {
            #expect(!text.contains(secret))
            #expect(text.contains("7"))
            #expect(text.contains("redacted"))
        }
    }
}
