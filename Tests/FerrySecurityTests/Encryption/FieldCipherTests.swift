@testable import FerrySecurity
import Foundation
import Testing

@Suite("FieldCipher")
struct FieldCipherTests {
    let spaceID = UUID()
    let recordID = UUID()
    let value = Data(#"{"title":"Sermon on the Mount","minutes":42}"#.utf8)

    private func encrypt(_ value: Data, key: SpaceKey, field: String = "notes") throws -> String {
        try FieldCipher.encrypt(value, spaceID: spaceID, collection: "sermons", recordID: recordID, field: field, key: key)
    }

    private func decrypt(_ text: String, key: SpaceKey, field: String = "notes") throws -> Data {
        try FieldCipher.decrypt(text, spaceID: spaceID, collection: "sermons", recordID: recordID, field: field, key: key)
    }

    @Test("values of every size round-trip, as nonce ‖ ciphertext ‖ tag in padded standard base64")
    func roundTrip() throws {
        let key = try SpaceKey.generate()
        for length in [0, 1, 2, 3, 15, 16, 17, 64, 1000] {
            let plaintext = Data(SecureRandom.bytes(length))
            let encrypted = try encrypt(plaintext, key: key)
            let bytes = try #require(Data(base64Encoded: encrypted))
            #expect(bytes.count == 12 + length + 16)
            #expect(try decrypt(encrypted, key: key) == plaintext)
        }
    }

    @Test("encrypting the same value twice gives different text: a fresh nonce each time")
    func freshNonce() throws {
        let key = try SpaceKey.generate()
        let first = try encrypt(value, key: key)
        let second = try encrypt(value, key: key)
        #expect(first != second)
        #expect(Data(base64Encoded: first)!.prefix(12) != Data(base64Encoded: second)!.prefix(12))
    }

    @Test("flipping any bit of any byte fails to open", arguments: [MessagePart.nonce, .ciphertext, .tag])
    func bitFlips(part: MessagePart) throws {
        let key = try SpaceKey.generate()
        let combined = try #require(Data(base64Encoded: try encrypt(value, key: key)))
        let ciphertextEnd = 12 + value.count
        let range: Range<Int> = switch part {
        case .nonce: 0..<12
        case .ciphertext: 12..<ciphertextEnd
        case .tag: ciphertextEnd..<(ciphertextEnd + 16)
        case .encapsulatedKey: 0..<0
        }
        #expect(range.count == (part == .ciphertext ? value.count : part == .nonce ? 12 : 16))
        for offset in range {
            for bit in 0..<8 {
                let altered = combined.flippingBit(bit, at: offset).base64EncodedString()
                let error = #expect(throws: EncryptionError.self, "\(part) byte \(offset) bit \(bit)") { try decrypt(altered, key: key) }
                #expect(error?.code == .openFailed, "\(part) byte \(offset) bit \(bit)")
            }
        }
    }

    @Test("a value opens only in its own space, collection, record and field, under its own key")
    func boundToPlace() throws {
        let key = try SpaceKey.generate()
        let encrypted = try encrypt(value, key: key)
        let attempts: [(String, () throws -> Data)] = [
            ("other space", { try FieldCipher.decrypt(encrypted, spaceID: UUID(), collection: "sermons", recordID: recordID, field: "notes", key: key) }),
            ("other collection", { try FieldCipher.decrypt(encrypted, spaceID: spaceID, collection: "summaries", recordID: recordID, field: "notes", key: key) }),
            ("other record", { try FieldCipher.decrypt(encrypted, spaceID: spaceID, collection: "sermons", recordID: UUID(), field: "notes", key: key) }),
            ("other field", { try FieldCipher.decrypt(encrypted, spaceID: spaceID, collection: "sermons", recordID: recordID, field: "title", key: key) }),
            ("other key", { try FieldCipher.decrypt(encrypted, spaceID: spaceID, collection: "sermons", recordID: recordID, field: "notes", key: try SpaceKey.generate()) }),
        ]
        for (label, attempt) in attempts {
            let error = #expect(throws: EncryptionError.self, "\(label)") { try attempt() }
            #expect(error?.code == .openFailed, "\(label)")
            #expect(error?.message.contains("notes") == true || error?.message.contains("title") == true, "\(label)")
        }
    }

    @Test("text that is not canonical base64 or is shorter than nonce and tag is malformed_ciphertext")
    func malformed() throws {
        let key = try SpaceKey.generate()
        let encrypted = try encrypt(value, key: key)
        for text in ["", "not base64!", String(encrypted.dropLast()), Data(count: 27).base64EncodedString(), encrypted + "\n"] {
            let error = #expect(throws: EncryptionError.self) { try decrypt(text, key: key) }
            #expect(error?.code == .malformedCiphertext)
        }
    }

    @Test("collection and field names that would blur the additional data are invalid_field_path", arguments: ["", "a/b"])
    func invalidNames(name: String) throws {
        let key = try SpaceKey.generate()
        for attempt in [
            { _ = try FieldCipher.encrypt(value, spaceID: spaceID, collection: name, recordID: recordID, field: "notes", key: key) },
            { _ = try FieldCipher.encrypt(value, spaceID: spaceID, collection: "sermons", recordID: recordID, field: name, key: key) },
        ] as [() throws -> Void] {
            let error = #expect(throws: EncryptionError.self) { try attempt() }
            #expect(error?.code == .invalidFieldPath)
        }
    }

    @Test("a versioned value carries its key version, opens with that version and names the one it needs otherwise")
    func versioned() throws {
        let version1 = try SpaceKey.generate(version: 1)
        let version2 = try SpaceKey.generate(version: 2)
        let encrypted = try FieldCipher.encryptedValue(value, spaceID: spaceID, collection: "sermons", recordID: recordID, field: "notes", key: version2)
        #expect(encrypted.keyVersion == 2)
        let json = try JSONEncoder().encode(encrypted)
        let decoded = try JSONDecoder().decode(EncryptedFieldValue.self, from: json)
        #expect(decoded == encrypted)
        #expect(try FieldCipher.decrypt(decoded, spaceID: spaceID, collection: "sermons", recordID: recordID, field: "notes", key: version2) == value)
        let error = #expect(throws: EncryptionError.self) {
            try FieldCipher.decrypt(decoded, spaceID: spaceID, collection: "sermons", recordID: recordID, field: "notes", key: version1)
        }
        #expect(error?.code == .keyVersionMismatch)
        #expect(error?.message.contains("version 2") == true)
    }
}
