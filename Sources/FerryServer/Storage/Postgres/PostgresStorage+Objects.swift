import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: ObjectCatalog {
    static let objectColumns = "id, bucket, name, space_id, sha256, size, content_type, cache_control, owner_id, created_at, updated_at"

    func object(bucket: String, name: String) async throws -> StoredObject? {
        try await Self.objects(try await client.query(
            "SELECT \(unescaped: Self.objectColumns) FROM ferry_objects WHERE bucket = \(bucket) AND name = \(name)", logger: logger
        )).first
    }

    func objects(bucket: String, named names: [String]) async throws -> [StoredObject] {
        try await Self.objects(try await client.query(
            "SELECT \(unescaped: Self.objectColumns) FROM ferry_objects WHERE bucket = \(bucket) AND name = ANY(\(names))", logger: logger
        ))
    }

    func saveObject(_ object: StoredObject, replace: Bool) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO ferry_objects (bucket, name, id, space_id, sha256, size, content_type, cache_control, owner_id, created_at, updated_at)
            VALUES (\(object.bucket), \(object.name), \(object.id), \(object.space), \(object.sha256), \(object.size), \(object.contentType),
              \(object.cacheControl), \(object.owner), \(object.createdAt), \(object.updatedAt))
            ON CONFLICT (bucket, name) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, content_type = excluded.content_type,
              cache_control = excluded.cache_control, owner_id = excluded.owner_id, updated_at = excluded.updated_at
              WHERE \(replace)
            RETURNING id
            """,
            logger: logger
        )
        for try await _ in rows.decode(UUID.self) { return true }
        return false
    }

    func deleteObjects(bucket: String, names: [String]) async throws -> [StoredObject] {
        try await Self.objects(try await client.query(
            "DELETE FROM ferry_objects WHERE bucket = \(bucket) AND name = ANY(\(names)) RETURNING \(unescaped: Self.objectColumns)", logger: logger
        ))
    }

    func objects(bucket: String, prefix: String, limit: Int) async throws -> [StoredObject] {
        try await Self.objects(try await client.query(
            """
            SELECT \(unescaped: Self.objectColumns) FROM ferry_objects
            WHERE bucket = \(bucket) AND left(name, \(Int32(prefix.unicodeScalars.count))) = \(prefix) ORDER BY name COLLATE "C" LIMIT \(limit)
            """,
            logger: logger
        ))
    }

    func saveResumableUpload(_ upload: ResumableUpload) async throws {
        try await client.query(
            """
            INSERT INTO ferry_object_uploads (id, bucket, name, space_id, owner_id, content_type, cache_control, upsert, length, created_at)
            VALUES (\(upload.id.text), \(upload.bucket), \(upload.name), \(upload.space), \(upload.owner), \(upload.contentType),
              \(upload.cacheControl), \(upload.upsert), \(upload.length), \(upload.createdAt))
            """,
            logger: logger
        )
    }

    func resumableUpload(id: UploadID) async throws -> ResumableUpload? {
        let rows = try await client.query(
            """
            SELECT bucket, name, space_id, owner_id, content_type, cache_control, upsert, length, created_at
            FROM ferry_object_uploads WHERE id = \(id.text)
            """,
            logger: logger
        )
        for try await (bucket, name, space, owner, type, cache, upsert, length, created) in rows.decode((String, String, UUID, UUID, String, String, Bool, Int64, Date).self) {
            return ResumableUpload(
                id: id, bucket: bucket, name: name, space: space, owner: owner, contentType: type, cacheControl: cache, upsert: upsert,
                length: length, createdAt: created
            )
        }
        return nil
    }

    func deleteResumableUpload(id: UploadID) async throws {
        try await client.query("DELETE FROM ferry_object_uploads WHERE id = \(id.text)", logger: logger)
    }

    func deleteResumableUploads(createdBefore cutoff: Date) async throws -> [UploadID] {
        let rows = try await client.query("DELETE FROM ferry_object_uploads WHERE created_at < \(cutoff) RETURNING id", logger: logger)
        var ids: [UploadID] = []
        for try await id in rows.decode(String.self) { if let id = UploadID(parsing: id) { ids.append(id) } }
        return ids
    }

    func usage(owner: UUID) async throws -> StorageUsage {
        let rows = try await client.query(
            """
            SELECT (SELECT coalesce(sum(size), 0)::bigint FROM ferry_objects WHERE owner_id = \(owner)),
              (SELECT count(*) FROM ferry_object_uploads WHERE owner_id = \(owner)),
              (SELECT coalesce(sum(length), 0)::bigint FROM ferry_object_uploads WHERE owner_id = \(owner))
            """,
            logger: logger
        )
        for try await (stored, uploads, uploadBytes) in rows.decode((Int64, Int64, Int64).self) {
            return StorageUsage(storedBytes: stored, openUploads: Int(uploads), openUploadBytes: uploadBytes)
        }
        return StorageUsage()
    }

    func objectBlobs() async throws -> Set<BlobKey> {
        var keys: Set<BlobKey> = []
        let rows = try await client.query("SELECT DISTINCT space_id, sha256 FROM ferry_objects", logger: logger)
        for try await (space, hash) in rows.decode((UUID, String).self) { keys.insert(BlobKey(space: space, sha256: hash)) }
        return keys
    }

    static func objects(_ rows: PostgresRowSequence) async throws -> [StoredObject] {
        var objects: [StoredObject] = []
        for try await (id, bucket, name, space, hash, size, type, cache, owner, created, updated)
            in rows.decode((UUID, String, String, UUID, String, Int64, String, String, UUID, Date, Date).self) {
            objects.append(StoredObject(
                id: id, bucket: bucket, name: name, space: space, sha256: hash, size: size, contentType: type, cacheControl: cache,
                owner: owner, createdAt: created, updatedAt: updated
            ))
        }
        return objects
    }
}
