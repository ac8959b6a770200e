import Crypto
import Foundation

/// Encrypts and decrypts one field value of a record in an encrypted space, under the space key.
///
/// The value is the field's JSON encoding, sealed with ChaCha20-Poly1305 under a fresh random 12-byte nonce,
/// and travels as the standard base64 (with padding) of nonce ‖ ciphertext ‖ tag. The additional data is
/// `<space id>/<collection>/<record id>/<field>` (ids as lowercase UUIDs), so a value opens only in the
/// place it was written: the server cannot move it to another record, field, collection or space.
/// Field names and clocks stay in clear; the key version travels beside the value (``EncryptedFieldValue``).
public enum FieldCipher {
    /// The length of the random nonce that starts every encrypted value.
    public static let nonceByteCount = 12
    /// The length of the Poly1305 tag that ends every encrypted value.
    public static let tagByteCount = 16

    /// Encrypts `value`, the JSON encoding of a field's value, for the field `field` of record `recordID`.
    ///
    /// Returns the standard base64 (with padding) of nonce ‖ ciphertext ‖ tag. Throws `invalid_field_path` when
    /// `collection` or `field` is empty or contains `/`.
    public static func encrypt(
        _ value: Data,
        spaceID: UUID,
        collection: String,
        recordID: UUID,
        field: String,
        key: SpaceKey
    ) throws -> String {
        let aad = try aad(spaceID: spaceID, collection: collection, recordID: recordID, field: field)
        do {
            let box = try ChaChaPoly.seal(value, using: key.symmetricKey, nonce: ChaChaPoly.Nonce(), authenticating: aad)
            return box.combined.base64EncodedString()
        } catch {
            throw EncryptionError(code: .sealFailed, message: "Encrypting the field '\(field)' failed in the cryptographic library (\(type(of: error))).")
        }
    }

    /// Decrypts `encrypted` (as made by ``encrypt(_:spaceID:collection:recordID:field:key:)``) back to the JSON bytes.
    ///
    /// Throws `malformed_ciphertext` when it is not canonical base64 or shorter than a nonce and a tag, and
    /// `open_failed` when the key or the place (space, collection, record, field) differs, or any byte was altered.
    public static func decrypt(
        _ encrypted: String,
        spaceID: UUID,
        collection: String,
        recordID: UUID,
        field: String,
        key: SpaceKey
    ) throws -> Data {
        let aad = try aad(spaceID: spaceID, collection: collection, recordID: recordID, field: field)
        guard let combined = Data(canonicalBase64: encrypted), combined.count >= nonceByteCount + tagByteCount else {
            throw EncryptionError(
                code: .malformedCiphertext,
                message: "The encrypted value of field '\(field)' in \(collection)/\(recordID.uuidString.lowercased()) is not standard base64 "
                    + "of at least \(nonceByteCount + tagByteCount) bytes; the record was damaged in storage or transit."
            )
        }
        do {
            let box = try ChaChaPoly.SealedBox(combined: combined)
            return try ChaChaPoly.open(box, using: key.symmetricKey, authenticating: aad)
        } catch {
            throw EncryptionError(
                code: .openFailed,
                message: "The field '\(field)' of \(collection)/\(recordID.uuidString.lowercased()) does not open with space key "
                    + "version \(key.version): it was written under another key or in another place, or altered."
            )
        }
    }

    /// The UTF-8 bytes of `<space id>/<collection>/<record id>/<field>`, ids as lowercase UUIDs.
    static func aad(spaceID: UUID, collection: String, recordID: UUID, field: String) throws -> Data {
        for (kind, name) in [("collection", collection), ("field", field)] where name.isEmpty || name.contains("/") {
            throw EncryptionError(
                code: .invalidFieldPath,
                message: "The \(kind) name '\(name)' cannot label an encrypted value: it must be non-empty and contain no '/'."
            )
        }
        let path = "\(spaceID.uuidString.lowercased())/\(collection)/\(recordID.uuidString.lowercased())/\(field)"
        return Data(path.utf8)
    }
}
