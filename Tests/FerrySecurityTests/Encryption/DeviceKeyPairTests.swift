@testable import FerrySecurity
import Foundation
import Testing

@Suite("DeviceKeyPair and DevicePublicKey")
struct DeviceKeyPairTests {
    @Test("a new key pair publishes 32 raw bytes as padded standard base64, and restores from its private key")
    func generateAndRestore() throws {
        let keyPair = DeviceKeyPair.generate()
        #expect(keyPair.publicKey.rawRepresentation.count == 32)
        #expect(keyPair.publicKeyBase64.count == 44)
        #expect(keyPair.publicKeyBase64.hasSuffix("="))
        #expect(keyPair.publicKey.base64EncodedString == keyPair.publicKeyBase64)
        #expect(keyPair.privateKeyRawRepresentation.count == 32)

        let restored = try DeviceKeyPair(privateKeyBase64: keyPair.privateKeyBase64)
        #expect(restored.publicKeyBase64 == keyPair.publicKeyBase64)
        let fromRaw = try DeviceKeyPair(privateKeyRawRepresentation: keyPair.privateKeyRawRepresentation)
        #expect(fromRaw.publicKey == keyPair.publicKey)
        #expect(DeviceKeyPair.generate().publicKey != keyPair.publicKey)
    }

    @Test("a published public key reads back to the same key")
    func publicKeyRoundTrip() throws {
        let keyPair = DeviceKeyPair.generate()
        let parsed = try DevicePublicKey(base64Encoded: keyPair.publicKeyBase64)
        #expect(parsed == keyPair.publicKey)
        #expect(parsed.description == keyPair.publicKeyBase64)
    }

    @Test(
        "a public key string that is not padded standard base64 of 32 bytes is invalid_public_key",
        arguments: [
            "",
            "not base64!",
            Data(count: 31).base64EncodedString(),
            Data(repeating: 7, count: 33).base64EncodedString(),
            Data(repeating: 7, count: 64).base64EncodedString(),
            String(Data(repeating: 7, count: 32).base64EncodedString().dropLast()),  // padding missing
            " " + Data(repeating: 7, count: 32).base64EncodedString(),
            Data(repeating: 7, count: 32).base64EncodedString() + "\n",
        ]
    )
    func invalidPublicKeyStrings(text: String) {
        let error = #expect(throws: EncryptionError.self) { try DevicePublicKey(base64Encoded: text) }
        #expect(error?.code == .invalidPublicKey)
        #expect(error?.message.contains("32 bytes") == true || error?.message.contains("base64") == true)
    }

    @Test("the URL-safe alphabet is refused: the wire form is standard base64")
    func urlSafeAlphabetRefused() throws {
        // Find a key whose standard base64 has a '+' or '/', so its URL-safe spelling differs.
        var keyPair = DeviceKeyPair.generate()
        while !keyPair.publicKeyBase64.contains(where: { $0 == "+" || $0 == "/" }) { keyPair = .generate() }
        let urlSafe = keyPair.publicKeyBase64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let error = #expect(throws: EncryptionError.self) { try DevicePublicKey(base64Encoded: urlSafe) }
        #expect(error?.code == .invalidPublicKey)
    }

    @Test(
        "low-order points are invalid_public_key: nothing can be sealed to them",
        arguments: [
            Data(count: 32),
            Data([1] + [UInt8](repeating: 0, count: 31)),
            Data(hex: "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            Data(hex: "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
        ]
    )
    func lowOrderPoints(raw: Data) {
        let error = #expect(throws: EncryptionError.self) { try DevicePublicKey(base64Encoded: raw.base64EncodedString()) }
        #expect(error?.code == .invalidPublicKey)
    }

    @Test("a private key of another length or not base64 is invalid_private_key")
    func invalidPrivateKeys() {
        for raw in [Data(), Data(count: 31), Data(count: 33)] {
            let error = #expect(throws: EncryptionError.self) { try DeviceKeyPair(privateKeyRawRepresentation: raw) }
            #expect(error?.code == .invalidPrivateKey)
        }
        for text in ["", "****", Data(count: 16).base64EncodedString()] {
            let error = #expect(throws: EncryptionError.self) { try DeviceKeyPair(privateKeyBase64: text) }
            #expect(error?.code == .invalidPrivateKey)
        }
    }

    @Test("printing, reflecting or dumping a key pair never shows the private key")
    func redaction() {
        let keyPair = DeviceKeyPair.generate()
        let secret = keyPair.privateKeyBase64
        var dumped = ""
        dump(keyPair, to: &dumped)
        for text in [String(describing: keyPair), String(reflecting: keyPair), "\(keyPair)", dumped] {
            #expect(!text.contains(secret))
            #expect(text.contains("redacted"))
            #expect(text.contains(keyPair.publicKeyBase64))
        }
    }
}
