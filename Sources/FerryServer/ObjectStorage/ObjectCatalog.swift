import FerryCore
import Foundation

/// An object of a Storage bucket: a name in the bucket that points at a blob of the space its path starts with.
struct StoredObject: Sendable, Hashable {
    var id: UUID
    var bucket: String
    /// The path in the bucket, `{space}/…`.
    var name: String
    var space: UUID
    var sha256: String
    var size: Int64
    var contentType: String
    var cacheControl: String
    var owner: UUID
    var createdAt: Date
    var updatedAt: Date

    var blob: BlobKey { BlobKey(space: space, sha256: sha256) }
}

/// A TUS upload under way (`/storage/v1/upload/resumable/{id}`): where its object goes once complete.
struct ResumableUpload: Sendable, Hashable {
    var id: UploadID
    var bucket: String
    var name: String
    var space: UUID
    var owner: UUID
    var contentType: String
    var cacheControl: String
    var upsert: Bool
    var length: Int64
    var createdAt: Date
}

/// What one account holds in Storage, for its quotas.
struct StorageUsage: Sendable, Hashable {
    /// Bytes of the objects it owns.
    var storedBytes: Int64 = 0
    /// TUS uploads it has open.
    var openUploads: Int = 0
    /// The lengths its open TUS uploads declared.
    var openUploadBytes: Int64 = 0
}

/// Storage's objects and TUS uploads, in the database (so every instance sees them); the bytes are blobs.
protocol ObjectCatalog: Sendable {
    func object(bucket: String, name: String) async throws -> StoredObject?
    /// The objects of `bucket` among `names`, in one read.
    func objects(bucket: String, named names: [String]) async throws -> [StoredObject]
    /// Saves `object`; when one exists under its name, replaces it if `replace`, else changes nothing and returns `false`.
    func saveObject(_ object: StoredObject, replace: Bool) async throws -> Bool
    /// Deletes the named objects; returns those that existed.
    func deleteObjects(bucket: String, names: [String]) async throws -> [StoredObject]
    /// Objects whose name starts with `prefix`, by name, at most `limit`.
    func objects(bucket: String, prefix: String, limit: Int) async throws -> [StoredObject]
    func saveResumableUpload(_ upload: ResumableUpload) async throws
    func resumableUpload(id: UploadID) async throws -> ResumableUpload?
    func deleteResumableUpload(id: UploadID) async throws
    /// Drops TUS uploads created before `cutoff`; returns their ids (their bytes go with them).
    func deleteResumableUploads(createdBefore cutoff: Date) async throws -> [UploadID]
    /// What `owner` stores and has open.
    func usage(owner: UUID) async throws -> StorageUsage
    /// The blobs objects point at: blob collection keeps them.
    func objectBlobs() async throws -> Set<BlobKey>
}

extension Migration {
    /// Storage's objects and TUS uploads.
    static let objects = Migration(
        version: 8,
        name: "storage objects",
        sqlite: [
            """
            CREATE TABLE ferry_objects (
              bucket TEXT NOT NULL,
              name TEXT NOT NULL,
              id TEXT NOT NULL,
              space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
              sha256 TEXT NOT NULL,
              size INTEGER NOT NULL,
              content_type TEXT NOT NULL,
              cache_control TEXT NOT NULL,
              owner_id TEXT NOT NULL,
              created_at TEXT NOT NULL,
              updated_at TEXT NOT NULL,
              PRIMARY KEY (bucket, name)
            ) STRICT
            """,
            """
            CREATE TABLE ferry_object_uploads (
              id TEXT PRIMARY KEY NOT NULL,
              bucket TEXT NOT NULL,
              name TEXT NOT NULL,
              space_id TEXT NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
              owner_id TEXT NOT NULL,
              content_type TEXT NOT NULL,
              cache_control TEXT NOT NULL,
              upsert INTEGER NOT NULL,
              length INTEGER NOT NULL,
              created_at TEXT NOT NULL
            ) STRICT
            """,
        ],
        postgres: [
            """
            CREATE TABLE ferry_objects (
              bucket text NOT NULL,
              name text NOT NULL,
              id uuid NOT NULL,
              space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
              sha256 text NOT NULL,
              size bigint NOT NULL,
              content_type text NOT NULL,
              cache_control text NOT NULL,
              owner_id uuid NOT NULL,
              created_at timestamptz NOT NULL,
              updated_at timestamptz NOT NULL,
              PRIMARY KEY (bucket, name)
            )
            """,
            """
            CREATE TABLE ferry_object_uploads (
              id text PRIMARY KEY,
              bucket text NOT NULL,
              name text NOT NULL,
              space_id uuid NOT NULL REFERENCES ferry_spaces (id) ON DELETE CASCADE,
              owner_id uuid NOT NULL,
              content_type text NOT NULL,
              cache_control text NOT NULL,
              upsert boolean NOT NULL,
              length bigint NOT NULL,
              created_at timestamptz NOT NULL
            )
            """,
        ]
    )
}
