import FerryCore
import FerrySecurity
import Foundation

/// Encrypts the field values of records in encrypted spaces on their way out, and decrypts them on the way in
/// (`docs/encryption.md`, format 2). Every field but the collection's parent link and blob references (which name
/// ciphertext already) is encrypted, so the server can still cascade deletes and check blobs; ids, field names, clocks and tombstones stay in clear for the merge.
struct RecordSealer: Sendable {
    let schema: Schema
    let keyring: SpaceKeyring

    /// `mutation` with every field value encrypted under `key`.
    func seal(_ mutation: Mutation, with key: SpaceKey) throws -> Mutation {
        var sealed = mutation
        let collection = schema.collection(named: mutation.collection)
        for (field, value) in mutation.fields where collection?.isSealed(fieldNamed: field) ?? true {
            let encrypted = try FieldCipher.encryptedValue(
                Data(value.jsonText.utf8), spaceID: mutation.space, collection: mutation.collection,
                recordID: mutation.id, field: field, key: key
            )
            sealed.fields[field] = .object(["keyVersion": .number(Double(encrypted.keyVersion)), "ciphertext": .string(encrypted.ciphertext)])
        }
        return sealed
    }

    /// `change` with every encrypted field value opened.
    ///
    /// - Throws: ``SealingFailure/keyMissing`` when a value's key version is not sealed to this device, or an
    ///   ``FerrySecurity/EncryptionError`` when a value is malformed or does not open (never a partial record).
    func open(_ change: Change) throws -> Change {
        var opened = change
        let collection = schema.collection(named: change.collection)
        for (field, value) in change.fields where collection?.isSealed(fieldNamed: field) ?? true {
            let encrypted = try Self.encryptedValue(value, field: field)
            guard let key = try keyring.key(space: change.space, version: encrypted.keyVersion) else {
                throw SealingFailure.keyMissing(space: change.space, version: encrypted.keyVersion)
            }
            let json = try FieldCipher.decrypt(
                encrypted, spaceID: change.space, collection: change.collection, recordID: change.id, field: field, key: key
            )
            opened.fields[field] = try JSONValue(parsing: json)
        }
        return opened
    }

    private static func encryptedValue(_ value: JSONValue, field: String) throws -> EncryptedFieldValue {
        guard case .object(let object) = value, case .number(let version)? = object["keyVersion"],
              case .string(let ciphertext)? = object["ciphertext"], let keyVersion = Int(exactly: version)
        else {
            throw EncryptionError(
                code: .malformedCiphertext,
                message: "The field '\(field)' of a record in an encrypted space is not an encrypted value; the server or another device sent it in clear."
            )
        }
        return EncryptedFieldValue(keyVersion: keyVersion, ciphertext: ciphertext)
    }

    /// Why a record could not be opened or sealed, short of a cryptographic failure.
    enum SealingFailure: Error {
        /// This device holds no key of `version` for `space` (yet).
        case keyMissing(space: UUID, version: Int)
    }
}
