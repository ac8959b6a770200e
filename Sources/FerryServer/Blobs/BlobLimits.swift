import Foundation

/// Bounds and retention of blobs.
public struct BlobLimits: Sendable, Hashable {
    /// The largest blob accepted, in bytes (`--max-blob-bytes`).
    public var maximumBlobBytes: Int64 = 5 << 30
    /// How long a blob no live record references is kept before it is collected: long enough for a device that
    /// uploaded a file and then went offline to push the record that names it.
    public var retention: Duration = .seconds(7 * 86_400)
    /// How long an upload that stopped is kept for its device to resume it.
    public var uploadRetention: Duration = .seconds(86_400)
    /// How often unreferenced blobs and stale uploads are collected.
    public var collectionInterval: Duration = .seconds(3600)

    /// The defaults.
    public init() {}
}
