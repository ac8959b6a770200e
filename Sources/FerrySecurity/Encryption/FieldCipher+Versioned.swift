import Foundation

extension FieldCipher {
    /// Encrypts `value` like ``encrypt(_:spaceID:collection:recordID:field:key:)`` and pairs it with the key's version.
    public static func encryptedValue(
        _ value: Data,
        spaceID: UUID,
        collection: String,
        recordID: UUID,
        field: String,
        key: SpaceKey
    ) throws -> EncryptedFieldValue {
        let ciphertext = try encrypt(value, spaceID: spaceID, collection: collection, recordID: recordID, field: field, key: key)
        return EncryptedFieldValue(keyVersion: key.version, ciphertext: ciphertext)
    }

    /// Decrypts `value` with `key`, which must have the value's key version.
    ///
    /// Throws `key_version_mismatch` when the versions differ (look up the key of ``EncryptedFieldValue/keyVersion``),
    /// then whatever ``decrypt(_:spaceID:collection:recordID:field:key:)`` throws.
    public static func decrypt(
        _ value: EncryptedFieldValue,
        spaceID: UUID,
        collection: String,
        recordID: UUID,
        field: String,
        key: SpaceKey
    ) throws -> Data {
        guard value.keyVersion == key.version else {
            throw EncryptionError(
                code: .keyVersionMismatch,
                message: "The field '\(field)' was encrypted under space key version \(value.keyVersion), not \(key.version); "
                    + "decrypt it with the key of version \(value.keyVersion), which a trusted device seals to this device."
            )
        }
        return try decrypt(value.ciphertext, spaceID: spaceID, collection: collection, recordID: recordID, field: field, key: key)
    }
}
