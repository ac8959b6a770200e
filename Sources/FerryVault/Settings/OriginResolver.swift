import Foundation

/// The seed's origin fallback chain: the vault's setting → the global default → the nearest parent vault's
/// setting → the repository's `remote.origin.url`.
public enum OriginResolver {
    /// Resolves the origin of the vault at `vaultPath` (canonical absolute path).
    public static func resolve(vaultPath: String, settings: VaultSettings, repositoryOrigin: String?) -> OriginResolution {
        if let own = nonEmpty(settings.folders[vaultPath]?.origin) { return OriginResolution(url: own, source: .vault) }
        if let global = nonEmpty(settings.globalOrigin) { return OriginResolution(url: global, source: .global) }
        let parents = settings.folders
            .filter { path, folder in nonEmpty(folder.origin) != nil && path != vaultPath && vaultPath.hasPrefix(path.hasSuffix("/") ? path : path + "/") }
            .sorted { $0.key.count > $1.key.count }
        if let parent = parents.first?.value.origin { return OriginResolution(url: parent, source: .parent) }
        if let local = nonEmpty(repositoryOrigin) { return OriginResolution(url: local, source: .repository) }
        return OriginResolution(url: nil, source: .none)
    }

    /// Records an origin recovered from a later step on the vault's setting and as the global default.
    public static func writeBack(_ resolution: OriginResolution, vaultPath: String, into settings: inout VaultSettings) -> Bool {
        guard let url = resolution.url, resolution.source != .vault, resolution.source != .none else { return false }
        settings.folders[vaultPath, default: .init()].origin = url
        settings.globalOrigin = url
        return true
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }
}
