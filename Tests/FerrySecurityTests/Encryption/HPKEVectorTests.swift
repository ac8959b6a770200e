import Crypto
@testable import FerrySecurity
import Foundation
import Testing

/// RFC 9180 Appendix A.2.1: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305, base mode.
@Suite("RFC 9180 A.2.1 vector, opened through SpaceKeySealer's open path")
struct HPKEVectorTests {
    static let skRm = Data(hex: "8057991eef8f1f1af18f4a9491d16a1ce333f695d4db8e38da75975c4478e0fb")
    static let pkRm = Data(hex: "4310ee97d88cc1f088a5576c77ab0cf5c3ac797f3d95139c6c84b5429c59662a")
    static let enc = Data(hex: "1afa08d3dec047a643885163f1180476fa7ddb54c6a8029ea33f95796bf2ac4a")
    static let info = Data(hex: "4f6465206f6e2061204772656369616e2055726e")  // "Ode on a Grecian Urn"
    // Encryption sequence number 0.
    static let aad = Data(hex: "436f756e742d30")  // "Count-0"
    static let ct = Data(hex: "1c5250d8034ec2b784ba2cfd69dbdb8af406cfe3ff938e131f0def8c8b60b4db21993c62ce81883d2dd1b51a28")
    static let pt = Data(hex: "4265617574792069732074727574682c20747275746820626561757479")  // "Beauty is truth, truth beauty"

    @Test("the recipient's key pair matches the vector's pkRm")
    func recipientKey() throws {
        let keyPair = try DeviceKeyPair(privateKeyRawRepresentation: Self.skRm)
        #expect(keyPair.publicKey.rawRepresentation == Self.pkRm)
    }

    @Test("the first sequence's ciphertext opens to the vector's plaintext")
    func opensVector() throws {
        let keyPair = try DeviceKeyPair(privateKeyRawRepresentation: Self.skRm)
        let plaintext = try SpaceKeySealer.open(
            encapsulatedKey: Self.enc, ciphertext: Self.ct, info: Self.info, aad: Self.aad, with: keyPair.privateKey
        )
        #expect(plaintext == Self.pt)
        #expect(String(decoding: plaintext, as: UTF8.self) == "Beauty is truth, truth beauty")
    }

    @Test("the vector fails to open with another info, another aad, or a flipped bit")
    func vectorIsBound() throws {
        let keyPair = try DeviceKeyPair(privateKeyRawRepresentation: Self.skRm)
        func open(enc: Data = Self.enc, ct: Data = Self.ct, info: Data = Self.info, aad: Data = Self.aad) throws -> Data {
            try SpaceKeySealer.open(encapsulatedKey: enc, ciphertext: ct, info: info, aad: aad, with: keyPair.privateKey)
        }
        #expect(throws: EncryptionError.self) { try open(info: Data("Ode on a Grecian Urm".utf8)) }
        #expect(throws: EncryptionError.self) { try open(aad: Data("Count-1".utf8)) }
        #expect(throws: EncryptionError.self) { try open(ct: Self.ct.flippingBit(0, at: 0)) }
        #expect(throws: EncryptionError.self) { try open(enc: Self.enc.flippingBit(7, at: 31)) }
    }

    @Test("Ferry's seal path opens through the same open path")
    func sealThenOpen() throws {
        let keyPair = DeviceKeyPair.generate()
        let (enc, ct) = try SpaceKeySealer.seal(Self.pt, info: Self.info, aad: Self.aad, to: keyPair.publicKey.key)
        #expect(enc.count == 32)
        #expect(ct.count == Self.pt.count + 16)
        #expect(try SpaceKeySealer.open(encapsulatedKey: enc, ciphertext: ct, info: Self.info, aad: Self.aad, with: keyPair.privateKey) == Self.pt)
    }
}
