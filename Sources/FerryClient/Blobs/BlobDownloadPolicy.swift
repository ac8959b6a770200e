/// When the engine downloads the blobs that pulled records name: per collection or per field.
///
/// ```swift
/// var policy = BlobDownloadPolicy(default: .eager)
/// policy["sermons.audio"] = .notOnExpensiveNetwork
/// policy["attachments"] = .onFirstAccess
/// ```
public struct BlobDownloadPolicy: Sendable, Hashable {
    /// One policy.
    public enum Mode: String, Sendable, Hashable, Codable {
        /// Downloaded by the sync that pulls the record.
        case eager
        /// Downloaded when the app asks for the file (``SyncEngine/file(for:in:)``).
        case onFirstAccess
        /// Downloaded by a sync on a network that is not expensive (cellular, a personal hotspot), or on access.
        case notOnExpensiveNetwork
    }

    /// The mode of fields no override names.
    public var defaultMode: Mode
    /// Overrides by `"collection"` or `"collection.field"` (the field wins).
    public var overrides: [String: Mode] = [:]

    /// A policy with `defaultMode` for every field.
    public init(default defaultMode: Mode = .eager) {
        self.defaultMode = defaultMode
    }

    /// The override for `"collection"` or `"collection.field"`.
    public subscript(key: String) -> Mode? {
        get { overrides[key] }
        set { overrides[key] = newValue }
    }

    /// The mode of a field.
    public func mode(collection: String, field: String) -> Mode {
        overrides["\(collection).\(field)"] ?? overrides[collection] ?? defaultMode
    }

    /// Whether a sync downloads a field's blobs now.
    func downloadsDuringSync(collection: String, field: String, onExpensiveNetwork: Bool) -> Bool {
        switch mode(collection: collection, field: field) {
        case .eager: true
        case .onFirstAccess: false
        case .notOnExpensiveNetwork: !onExpensiveNetwork
        }
    }
}
