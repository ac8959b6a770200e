import FerrySecurity
import Foundation

/// Credentials in a JSON file that only its owner can read (mode 0600, replaced atomically).
public struct FileCredentialStore: CredentialStore {
    /// The file.
    public let fileURL: URL

    /// Creates a store at `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// The stored credentials; empty when the file does not exist.
    public func load() throws -> VaultCredentials {
        guard FileManager.default.fileExists(atPath: fileURL.path(percentEncoded: false)) else { return VaultCredentials() }
        return try JSONDecoder().decode(VaultCredentials.self, from: Data(contentsOf: fileURL))
    }

    /// Replaces the file with `credentials`, mode 0600 from creation.
    public func save(_ credentials: VaultCredentials) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try OwnerOnlyFile.write(try encoder.encode(credentials), to: fileURL)
    }

    /// Deletes the file.
    public func delete() throws {
        if FileManager.default.fileExists(atPath: fileURL.path(percentEncoded: false)) { try FileManager.default.removeItem(at: fileURL) }
    }
}
