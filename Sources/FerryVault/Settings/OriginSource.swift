/// Where a vault's origin came from.
public enum OriginSource: String, Sendable, Hashable, Codable {
    /// The vault's own setting.
    case vault
    /// The global default.
    case global
    /// The nearest parent vault's setting.
    case parent
    /// The repository's `remote.origin.url`.
    case repository
    /// Nowhere: no origin is configured.
    case none
}
