import FerryCore
import Foundation

/// The rule for field values of records in an end-to-end encrypted space: every field but the collection's parent
/// link holds `{"keyVersion": v, "ciphertext": "<base64>"}` (`docs/encryption.md`, format 2), with `v` a key version
/// the space has. The server checks the form, never the content, and stores such values in the `_sealed` column.
enum SealedFieldValue {
    /// The shortest ciphertext: a 12-byte nonce and a 16-byte tag around an empty plaintext.
    static let minimumCiphertextBytes = 28

    /// `value` in its one stored form, or why it is refused.
    /// - Parameter keyVersion: the space's current key version (at least 1).
    static func normalized(_ value: JSONValue, field: String, keyVersion current: Int) throws(Rejection) -> JSONValue {
        func clear(_ problem: String) -> Rejection {
            Rejection(
                .encryptionRequired,
                "Field '\(field)' is in an end-to-end encrypted space, so its value must be {\"keyVersion\", \"ciphertext\"} made by FieldCipher; \(problem)."
            )
        }
        guard case .object(let members) = value else { throw clear("this value is in clear") }
        guard Set(members.keys) == ["keyVersion", "ciphertext"] else {
            throw clear("this object has the keys \(members.keys.sorted().prefix(8).joined(separator: ", "))")
        }
        guard case .number(let number)? = members["keyVersion"], number.rounded() == number, number >= 1, number < 1e9 else {
            throw clear("keyVersion must be a whole number from 1")
        }
        let version = Int(number)
        guard version <= current else {
            throw Rejection(
                .keyVersionConflict,
                "Field '\(field)' was encrypted under key version \(version), but the space is at version \(current); store the new key with PUT /sync/v1/secrets first."
            )
        }
        guard case .string(let text)? = members["ciphertext"], let bytes = Data(base64Encoded: text),
              bytes.base64EncodedString() == text, bytes.count >= minimumCiphertextBytes
        else {
            throw clear("ciphertext must be standard base64 with padding of at least \(minimumCiphertextBytes) bytes")
        }
        return .object(["keyVersion": .number(Double(version)), "ciphertext": .string(text)])
    }
}
