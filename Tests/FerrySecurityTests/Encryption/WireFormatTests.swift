import Crypto
@testable import FerrySecurity
import Foundation
import Testing

/// The byte layouts of docs/encryption.md, checked with swift-crypto directly rather than through Ferry's code.
@Suite("Wire formats of docs/encryption.md")
struct WireFormatTests {
    let spaceID = UUID(uuidString: "6F1C2A3B-4D5E-4F60-8172-93A4B5C6D7E8")!
    let deviceID = UUID(uuidString: "0A1B2C3D-4E5F-4061-8273-94A5B6C7D8E9")!
    let recordID = UUID(uuidString: "AABBCCDD-EEFF-4011-8233-445566778899")!

    @Test("info and aad of a sealed key are the documented strings, ids in lowercase")
    func sealingStrings() {
        #expect(SpaceKeySealer.info(spaceID: spaceID) == Data("ferry.space-key.v1:6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8".utf8))
        #expect(SpaceKeySealer.aad(deviceID: deviceID) == Data("0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9".utf8))
    }

    @Test("aad of a field value is <space>/<collection>/<record>/<field>, ids in lowercase")
    func fieldString() throws {
        let aad = try FieldCipher.aad(spaceID: spaceID, collection: "sermons", recordID: recordID, field: "notes")
        #expect(aad == Data("6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8/sermons/aabbccdd-eeff-4011-8233-445566778899/notes".utf8))
    }

    @Test("a sealed key opens with a plain HPKE recipient given the documented suite, info and aad")
    func sealedKeyLayout() throws {
        let device = Curve25519.KeyAgreement.PrivateKey()
        let publicKey = try DevicePublicKey(base64Encoded: device.publicKey.rawRepresentation.base64EncodedString())
        let key = try SpaceKey.generate(version: 2)
        let sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: publicKey, deviceID: deviceID)

        var recipient = try HPKE.Recipient(
            privateKey: device,
            ciphersuite: HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .chaChaPoly),
            info: Data("ferry.space-key.v1:6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8".utf8),
            encapsulatedKey: try #require(Data(base64Encoded: sealed.encapsulatedKeyBase64))
        )
        let opened = try recipient.open(
            try #require(Data(base64Encoded: sealed.ciphertextBase64)),
            authenticating: Data("0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9".utf8)
        )
        #expect(opened == key.rawRepresentation)
    }

    @Test("an encrypted field is base64 of nonce ‖ ciphertext ‖ tag, opened with plain ChaCha20-Poly1305")
    func fieldLayout() throws {
        let key = try SpaceKey.generate()
        let json = Data(#""In the beginning""#.utf8)
        let encrypted = try FieldCipher.encrypt(json, spaceID: spaceID, collection: "sermons", recordID: recordID, field: "notes", key: key)
        let bytes = try #require(Data(base64Encoded: encrypted))
        let nonce = bytes.prefix(12), ciphertext = bytes.dropFirst(12).dropLast(16), tag = bytes.suffix(16)
        let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
        let opened = try ChaChaPoly.open(
            box,
            using: SymmetricKey(data: key.rawRepresentation),
            authenticating: Data("6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8/sermons/aabbccdd-eeff-4011-8233-445566778899/notes".utf8)
        )
        #expect(opened == json)
    }
}
