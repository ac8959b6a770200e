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
    /// The longest a signed read URL may live (`--max-signed-url-seconds`); Storage's own cap is a year.
    public var maximumSignedURLLifetime: Duration = .seconds(31_536_000)
    /// Storage uploads (TUS) one account may have open at once (`--max-open-uploads-per-account`).
    public var maximumOpenUploadsPerAccount = 50
    /// The lengths one account's open Storage uploads may declare in all (`--max-open-upload-mib-per-account`).
    public var maximumOpenUploadBytesPerAccount: Int64 = 20 << 30
    /// The bytes of Storage objects one account may own (`--max-stored-mib-per-account`).
    public var maximumStoredBytesPerAccount: Int64 = 50 << 30
    /// Sync-API blob uploads one space may have under way at once (`--max-open-uploads-per-space`).
    public var maximumOpenUploadsPerSpace = 1000
    /// How long a download may wait on a client that takes no bytes before its connection is closed.
    public var stalledDownloadTimeout: Duration = .seconds(30)
    /// How often unreferenced blobs and stale uploads are collected.
    public var collectionInterval: Duration = .seconds(3600)

    /// The defaults.
    public init() {}
}
