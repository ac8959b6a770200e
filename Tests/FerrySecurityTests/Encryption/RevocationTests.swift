import FerrySecurity
import Foundation
import Testing

/// Revocation at the level of keys: rotating to version 2, sealed only to the remaining devices,
/// leaves the revoked device unable to read anything written after its revocation.
@Suite("Revocation by key rotation")
struct RevocationTests {
    struct Device {
        let id = UUID()
        let keyPair = DeviceKeyPair.generate()
    }

    let spaceID = UUID()
    let laptop = Device(), phone = Device(), stolenTablet = Device()

    private func seal(_ key: SpaceKey, to devices: [Device]) throws -> [UUID: SealedSpaceKey] {
        var rows: [UUID: SealedSpaceKey] = [:]
        for device in devices {
            rows[device.id] = try SpaceKeySealer.seal(key, spaceID: spaceID, to: device.keyPair.publicKey, deviceID: device.id)
        }
        return rows
    }

    @Test("after rotation to version 2 the revoked device opens no new sealed key and no version-2 value")
    func revokedDeviceReadsNothingNew() throws {
        // Version 1, sealed to all three devices; the tablet reads version-1 values like everyone else.
        let version1 = try SpaceKey.generate(version: 1)
        let secrets1 = try seal(version1, to: [laptop, phone, stolenTablet])
        let tabletKey1 = try SpaceKeySealer.open(try #require(secrets1[stolenTablet.id]), spaceID: spaceID, deviceID: stolenTablet.id, with: stolenTablet.keyPair)
        #expect(tabletKey1 == version1)

        // The tablet is revoked: the laptop makes version 2 and seals it to the remaining devices only.
        let version2 = try SpaceKey.generate(version: 2)
        let secrets2 = try seal(version2, to: [laptop, phone])
        #expect(secrets2[stolenTablet.id] == nil)
        for device in [laptop, phone] {
            let opened = try SpaceKeySealer.open(try #require(secrets2[device.id]), spaceID: spaceID, deviceID: device.id, with: device.keyPair)
            #expect(opened == version2)
        }

        // Every version-2 row, whichever device id the tablet claims, refuses the tablet's private key.
        for (ownerID, sealed) in secrets2 {
            for claimedID in [ownerID, stolenTablet.id] {
                let error = #expect(throws: EncryptionError.self) {
                    try SpaceKeySealer.open(sealed, spaceID: spaceID, deviceID: claimedID, with: stolenTablet.keyPair)
                }
                #expect(error?.code == .openFailed)
            }
        }

        // Values written after the revocation, under version 2, do not open with anything the tablet holds.
        let records = (0..<5).map { _ in UUID() }
        var written: [(UUID, EncryptedFieldValue)] = []
        for (index, recordID) in records.enumerated() {
            let json = Data(#"{"line":\#(index),"text":"after revocation"}"#.utf8)
            let value = try FieldCipher.encryptedValue(json, spaceID: spaceID, collection: "notes", recordID: recordID, field: "body", key: version2)
            #expect(value.keyVersion == 2)
            written.append((recordID, value))
            let phoneKey = try SpaceKeySealer.open(try #require(secrets2[phone.id]), spaceID: spaceID, deviceID: phone.id, with: phone.keyPair)
            #expect(try FieldCipher.decrypt(value, spaceID: spaceID, collection: "notes", recordID: recordID, field: "body", key: phoneKey) == json)
        }
        for (recordID, value) in written {
            let versionError = #expect(throws: EncryptionError.self) {
                try FieldCipher.decrypt(value, spaceID: spaceID, collection: "notes", recordID: recordID, field: "body", key: tabletKey1)
            }
            #expect(versionError?.code == .keyVersionMismatch)
            // Even ignoring the version label, the old key's bytes do not open a version-2 value.
            let relabelled = try SpaceKey(rawRepresentation: tabletKey1.rawRepresentation, version: 2)
            let openError = #expect(throws: EncryptionError.self) {
                try FieldCipher.decrypt(value, spaceID: spaceID, collection: "notes", recordID: recordID, field: "body", key: relabelled)
            }
            #expect(openError?.code == .openFailed)
        }
    }
}
