import FerryCore
import FerrySecurity
import Foundation

/// The text of an alert to an end-to-end encrypted space (``AlertRequest/sealed``), sealed with the space's key so that
/// the server and APNs carry ciphertext only; a Notification Service Extension opens it with the same key.
///
/// The sealed form is `<key version>.<base64 of nonce ‖ ciphertext ‖ tag>` of the JSON `{"title":…,"body":…}`,
/// encrypted as a record field is (ChaCha20-Poly1305) under the place `<space>/ferry.alert/<space>/text`, so it opens
/// only as an alert of that space.
public struct AlertSealer: Sendable {
    /// An alert's text in clear.
    public struct Text: Sendable, Hashable, Codable {
        public var title: String?
        public var body: String?

        /// Creates a text.
        public init(title: String?, body: String?) {
            self.title = title
            self.body = body
        }
    }

    let store: LocalStore
    let keyring: SpaceKeyring

    /// A sealer reading the space keys sealed to this device (`deviceKeys`) from `store`: the app's store, or in an
    /// extension the store in the App Group container.
    public init(store: LocalStore, deviceKeys: DeviceKeyPair) {
        self.store = store
        keyring = SpaceKeyring(store: store, deviceKeys: deviceKeys)
    }

    /// Seals `text` with the current key of `space`, for ``AlertRequest/sealed``.
    ///
    /// - Throws: `space_key_missing` when this device holds no key of the space yet.
    public func seal(_ text: Text, space: UUID) throws -> String {
        guard let version = try store.encryptedSpaces()[space], version > 0, let key = try keyring.key(space: space, version: version) else {
            throw Self.keyMissing(space)
        }
        let plaintext = try JSONEncoder().encode(text)
        let ciphertext = try FieldCipher.encrypt(plaintext, spaceID: space, collection: "ferry.alert", recordID: space, field: "text", key: key)
        return "\(version).\(ciphertext)"
    }

    /// Opens what ``seal(_:space:)`` made (in a Notification Service Extension: `userInfo["ferry"]["sealed"]` and
    /// `["space"]`).
    ///
    /// - Throws: `space_key_missing` when this device holds no key of that version, ``FerrySecurity/EncryptionError``
    ///   when the text was altered or sealed for another space.
    public func open(_ sealed: String, space: UUID) throws -> Text {
        guard let dot = sealed.firstIndex(of: "."), let version = Int(sealed[..<dot]), version > 0 else {
            throw EncryptionError(code: .malformedCiphertext, message: "A sealed alert starts with its key version and a dot.")
        }
        guard let key = try keyring.key(space: space, version: version) else { throw Self.keyMissing(space) }
        let plaintext = try FieldCipher.decrypt(
            String(sealed[sealed.index(after: dot)...]), spaceID: space, collection: "ferry.alert", recordID: space, field: "text", key: key
        )
        return try JSONDecoder().decode(Text.self, from: plaintext)
    }

    private static func keyMissing(_ space: UUID) -> EncryptionError {
        EncryptionError(
            code: .spaceKeyMissing,
            message: "This device holds no key of space \(space.uuidString.lowercased()) yet; a trusted device seals one to it at its next sync."
        )
    }
}
