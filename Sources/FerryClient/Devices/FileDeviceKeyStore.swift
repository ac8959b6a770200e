import FerrySecurity
import Foundation

/// Keeps the device key pair in a file `device.key` that only its owner can read (mode 0600).
///
/// The file holds the standard base64 (with padding) of the private key's 32 raw bytes, nothing else
/// (a trailing newline is tolerated on reading). It is created 0600 before any byte is written, in a folder
/// created 0700, and never overwritten: when two processes create it at once, both end up with the first key.
/// This is the store for Linux, the CLI and tests; Apple apps use `KeychainDeviceKeyStore`.
public struct FileDeviceKeyStore: DeviceKeyStore {
    /// The name of the key file inside the profile folder.
    public static let fileName = "device.key"

    /// The profile folder that holds `device.key`, e.g. `~/.config/ferry`.
    public var folder: URL

    /// Creates a store that keeps the key in `folder`/`device.key`.
    public init(folder: URL) {
        self.folder = folder
    }

    /// The key file.
    public var fileURL: URL { folder.appending(path: Self.fileName) }

    /// Reads the key file, or `nil` when there is none.
    ///
    /// Throws `key_store_failed` when the file cannot be read and `invalid_private_key` when it does not hold a
    /// device key; the file is left as it is either way.
    public func load() throws -> DeviceKeyPair? {
        let data: Data
        do {
            guard let contents = try OwnerOnlyFile.read(fileURL) else { return nil }
            data = contents
        } catch {
            throw EncryptionError(code: .keyStoreFailed, message: "Could not read the device key file \(fileURL.path): \(error.localizedDescription).")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            return try DeviceKeyPair(privateKeyBase64: text)
        } catch {
            throw EncryptionError(
                code: .invalidPrivateKey,
                message: "The device key file \(fileURL.path) does not hold a device key (the base64 of 32 bytes) and was left untouched. "
                    + "Restore it from a backup, or delete it to make this a new device that a trusted device must trust again."
            )
        }
    }

    /// Reads the key file, or creates it with a new key pair when there is none.
    public func loadOrCreate() throws -> DeviceKeyPair {
        if let existing = try load() { return existing }
        let keyPair = DeviceKeyPair.generate()
        let created: Bool
        do {
            created = try OwnerOnlyFile.create(Data(keyPair.privateKeyBase64.utf8), at: fileURL)
        } catch {
            throw EncryptionError(code: .keyStoreFailed, message: "Could not save the device key to \(fileURL.path): \(error.localizedDescription).")
        }
        if created { return keyPair }
        // Another process created the file between our read and our write: use its key.
        guard let existing = try load() else {
            throw EncryptionError(code: .keyStoreFailed, message: "The device key file \(fileURL.path) appeared and vanished while it was being created; try again.")
        }
        return existing
    }
}
