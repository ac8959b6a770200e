@testable import FerrySecurity
import Foundation
import Testing

@Suite("SpaceKeySealer")
struct SpaceKeySealerTests {
    let spaceID = UUID()
    let deviceID = UUID()
    let device = DeviceKeyPair.generate()

    @Test("a sealed key opens on its device to the same key and version")
    func roundTrip() throws {
        let key = try SpaceKey.generate(version: 4)
        let sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        #expect(sealed.keyVersion == 4)
        #expect(sealed.encapsulatedKey.count == 32)
        #expect(sealed.ciphertext.count == 32 + 16)
        #expect(try SpaceKeySealer.open(sealed, spaceID: spaceID, deviceID: deviceID, with: device) == key)
    }

    @Test("a sealed key survives its base64 form, which is standard base64 with padding")
    func base64RoundTrip() throws {
        let key = try SpaceKey.generate()
        let sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        #expect(sealed.encapsulatedKeyBase64.count == 44)
        #expect(sealed.ciphertextBase64.count == 64)
        let stored = try SealedSpaceKey(
            keyVersion: sealed.keyVersion, encapsulatedKeyBase64: sealed.encapsulatedKeyBase64, ciphertextBase64: sealed.ciphertextBase64
        )
        #expect(stored == sealed)
        #expect(try SpaceKeySealer.open(stored, spaceID: spaceID, deviceID: deviceID, with: device) == key)
    }

    @Test("sealing twice gives different bytes: a fresh ephemeral key each time")
    func freshEphemeral() throws {
        let key = try SpaceKey.generate()
        let first = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        let second = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        #expect(first.encapsulatedKey != second.encapsulatedKey)
        #expect(first.ciphertext != second.ciphertext)
    }

    @Test("it opens only for the space, the device id and the private key it was sealed for")
    func boundToContext() throws {
        let key = try SpaceKey.generate()
        let sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        let attempts: [(String, () throws -> SpaceKey)] = [
            ("other space", { try SpaceKeySealer.open(sealed, spaceID: UUID(), deviceID: deviceID, with: device) }),
            ("other device id", { try SpaceKeySealer.open(sealed, spaceID: spaceID, deviceID: UUID(), with: device) }),
            ("other private key", { try SpaceKeySealer.open(sealed, spaceID: spaceID, deviceID: deviceID, with: .generate()) }),
        ]
        for (label, attempt) in attempts {
            let error = #expect(throws: EncryptionError.self, "\(label)") { try attempt() }
            #expect(error?.code == .openFailed, "\(label)")
        }
    }

    @Test("flipping any bit of any byte fails to open", arguments: [MessagePart.encapsulatedKey, .ciphertext, .tag])
    func bitFlips(part: MessagePart) throws {
        let key = try SpaceKey.generate()
        let sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        let range: Range<Int> = switch part {
        case .encapsulatedKey: 0..<32
        case .ciphertext: 0..<32
        case .tag: 32..<48
        case .nonce: 0..<0
        }
        #expect(!range.isEmpty)
        for offset in range {
            for bit in 0..<8 {
                var altered = sealed
                if part == .encapsulatedKey {
                    altered.encapsulatedKey = sealed.encapsulatedKey.flippingBit(bit, at: offset)
                } else {
                    altered.ciphertext = sealed.ciphertext.flippingBit(bit, at: offset)
                }
                let error = #expect(throws: EncryptionError.self, "\(part) byte \(offset) bit \(bit)") {
                    try SpaceKeySealer.open(altered, spaceID: spaceID, deviceID: deviceID, with: device)
                }
                #expect(error?.code == .openFailed, "\(part) byte \(offset) bit \(bit)")
            }
        }
    }

    @Test("parts of impossible length, or not base64, are malformed_ciphertext")
    func malformed() throws {
        let key = try SpaceKey.generate()
        let sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        let shapes = [
            SealedSpaceKey(keyVersion: 1, encapsulatedKey: sealed.encapsulatedKey.dropLast(), ciphertext: sealed.ciphertext),
            SealedSpaceKey(keyVersion: 1, encapsulatedKey: sealed.encapsulatedKey + [0], ciphertext: sealed.ciphertext),
            SealedSpaceKey(keyVersion: 1, encapsulatedKey: sealed.encapsulatedKey, ciphertext: sealed.ciphertext.prefix(16)),
            SealedSpaceKey(keyVersion: 1, encapsulatedKey: sealed.encapsulatedKey, ciphertext: Data()),
        ]
        for shape in shapes {
            let error = #expect(throws: EncryptionError.self) { try SpaceKeySealer.open(shape, spaceID: spaceID, deviceID: deviceID, with: device) }
            #expect(error?.code == .malformedCiphertext)
        }
        for (enc, ct) in [("not base64", sealed.ciphertextBase64), (sealed.encapsulatedKeyBase64, String(sealed.ciphertextBase64.dropLast()))] {
            let error = #expect(throws: EncryptionError.self) { try SealedSpaceKey(keyVersion: 1, encapsulatedKeyBase64: enc, ciphertextBase64: ct) }
            #expect(error?.code == .malformedCiphertext)
        }
    }

    @Test("a low-order encapsulated key is refused before any key agreement is trusted")
    func lowOrderEncapsulatedKey() throws {
        let key = try SpaceKey.generate()
        var sealed = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        sealed.encapsulatedKey = Data(count: 32)
        let error = #expect(throws: EncryptionError.self) { try SpaceKeySealer.open(sealed, spaceID: spaceID, deviceID: deviceID, with: device) }
        #expect(error?.code == .openFailed)
    }

    @Test("a sealed secret that is not 32 bytes is invalid_key_length, and a version below 1 is invalid_key_version")
    func wrongPayload() throws {
        let info = SpaceKeySealer.info(spaceID: spaceID), aad = SpaceKeySealer.aad(deviceID: deviceID)
        let (enc, ct) = try SpaceKeySealer.seal(Data(count: 16), info: info, aad: aad, to: device.publicKey.key)
        let short = SealedSpaceKey(keyVersion: 1, encapsulatedKey: enc, ciphertext: ct)
        let error = #expect(throws: EncryptionError.self) { try SpaceKeySealer.open(short, spaceID: spaceID, deviceID: deviceID, with: device) }
        #expect(error?.code == .invalidKeyLength)

        var unversioned = try SpaceKeySealer.seal(try SpaceKey.generate(), spaceID: spaceID, to: device.publicKey, deviceID: deviceID)
        unversioned.keyVersion = 0
        let versionError = #expect(throws: EncryptionError.self) {
            try SpaceKeySealer.open(unversioned, spaceID: spaceID, deviceID: deviceID, with: device)
        }
        #expect(versionError?.code == .invalidKeyVersion)
    }
}
