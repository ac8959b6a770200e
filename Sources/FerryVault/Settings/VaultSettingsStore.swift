import FerrySecurity
import Foundation

/// Reads and writes a profile's ``VaultSettings`` (`vault.json` in the profile folder, mode 0600).
public struct VaultSettingsStore: Sendable {
    /// The settings file.
    public let fileURL: URL

    /// Creates a store at `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// The stored settings, or the defaults when none are stored.
    public func load() throws -> VaultSettings {
        guard FileManager.default.fileExists(atPath: fileURL.path(percentEncoded: false)) else { return VaultSettings() }
        do {
            return try JSONDecoder().decode(VaultSettings.self, from: Data(contentsOf: fileURL))
        } catch {
            throw VaultError(.invalidArgument, "The vault settings at \(fileURL.path(percentEncoded: false)) are unreadable: \(error.localizedDescription)")
        }
    }

    /// Replaces the stored settings.
    public func save(_ settings: VaultSettings) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try OwnerOnlyFile.write(try encoder.encode(settings), to: fileURL)
    }

    /// Loads, changes and saves the settings.
    @discardableResult
    public func update(_ change: (inout VaultSettings) throws -> Void) throws -> VaultSettings {
        var settings = try load()
        try change(&settings)
        try save(settings)
        return settings
    }
}
