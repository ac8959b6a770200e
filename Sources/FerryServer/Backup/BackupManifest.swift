import Foundation

/// `backup.json`: what a backup holds, with each file's size and SHA-256, so a restore (or `ferry backup verify`) can
/// tell a complete, unaltered backup from a damaged one.
public struct BackupManifest: Codable, Sendable, Hashable {
    /// One file of the backup, by its path inside the backup folder.
    public struct File: Codable, Sendable, Hashable {
        /// The path inside the backup folder (`ferry.sqlite`, `keys/jwt-secret`, `blobs/<space>/<sha256>`).
        public var path: String
        /// The file's size.
        public var bytes: Int64
        /// The file's SHA-256, hex.
        public var sha256: String
    }

    /// The manifest's own format; a restore refuses one it does not know.
    public var format = 1
    /// When the database snapshot was taken (ISO 8601).
    public var createdAt: String
    /// The server's migrations applied in the snapshot: a restore refuses a backup newer than its ferry.
    public var migrations: [Int]
    /// The database snapshot (`ferry.sqlite`).
    public var database: File
    /// The signing secret and the API keys (`keys/…`), so tokens and keys of the time keep working.
    public var keys: [File]
    /// The blob files (`blobs/<space>/<sha256>`), named by their SHA-256.
    public var blobs: [File]

    enum CodingKeys: String, CodingKey {
        case format, migrations, database, keys, blobs
        case createdAt = "created_at"
    }

    /// The file name of the manifest in a backup folder.
    public static let fileName = "backup.json"
}
