import FerryCore
import Foundation
import GRDB

extension SQLiteStorage: ObjectCatalog {
    func object(bucket: String, name: String) async throws -> StoredObject? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM ferry_objects WHERE bucket = ? AND name = ?", arguments: [bucket, name]).flatMap(Self.object)
        }
    }

    func objects(bucket: String, named names: [String]) async throws -> [StoredObject] {
        try await pool.read { db in
            try names.compactMap { name in
                try Row.fetchOne(db, sql: "SELECT * FROM ferry_objects WHERE bucket = ? AND name = ?", arguments: [bucket, name]).flatMap(Self.object)
            }
        }
    }

    func saveObject(_ object: StoredObject, replace: Bool) async throws -> Bool {
        try await pool.write { db in
            let exists = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_objects WHERE bucket = ? AND name = ?)", arguments: [object.bucket, object.name]
            ) ?? false
            if exists && !replace { return false }
            try db.execute(
                sql: """
                    INSERT INTO ferry_objects (bucket, name, id, space_id, sha256, size, content_type, cache_control, owner_id, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (bucket, name) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
                      content_type = excluded.content_type, cache_control = excluded.cache_control, owner_id = excluded.owner_id,
                      updated_at = excluded.updated_at
                    """,
                arguments: [
                    object.bucket, object.name, object.id.databaseText, object.space.databaseText, object.sha256, object.size,
                    object.contentType, object.cacheControl, object.owner.databaseText, Timestamp.format(object.createdAt), Timestamp.format(object.updatedAt),
                ]
            )
            return true
        }
    }

    func deleteObjects(bucket: String, names: [String]) async throws -> [StoredObject] {
        try await pool.write { db in
            var deleted: [StoredObject] = []
            for name in names {
                guard let row = try Row.fetchOne(db, sql: "SELECT * FROM ferry_objects WHERE bucket = ? AND name = ?", arguments: [bucket, name]),
                      let object = Self.object(row) else { continue }
                try db.execute(sql: "DELETE FROM ferry_objects WHERE bucket = ? AND name = ?", arguments: [bucket, name])
                deleted.append(object)
            }
            return deleted
        }
    }

    func objects(bucket: String, prefix: String, limit: Int) async throws -> [StoredObject] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_objects WHERE bucket = ? AND substr(name, 1, ?) = ? ORDER BY name LIMIT ?",
                arguments: [bucket, prefix.unicodeScalars.count, prefix, limit]
            ).compactMap(Self.object)
        }
    }

    func saveResumableUpload(_ upload: ResumableUpload) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO ferry_object_uploads (id, bucket, name, space_id, owner_id, content_type, cache_control, upsert, length, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    upload.id.text, upload.bucket, upload.name, upload.space.databaseText, upload.owner.databaseText, upload.contentType,
                    upload.cacheControl, upload.upsert, upload.length, Timestamp.format(upload.createdAt),
                ]
            )
        }
    }

    func resumableUpload(id: UploadID) async throws -> ResumableUpload? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM ferry_object_uploads WHERE id = ?", arguments: [id.text]),
                  let space = UUID(wireText: row["space_id"]), let owner = UUID(wireText: row["owner_id"]) else { return nil }
            return ResumableUpload(
                id: id, bucket: row["bucket"], name: row["name"], space: space, owner: owner, contentType: row["content_type"],
                cacheControl: row["cache_control"], upsert: row["upsert"], length: row["length"],
                createdAt: Timestamp.parse(row["created_at"]) ?? Date()
            )
        }
    }

    func deleteResumableUpload(id: UploadID) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM ferry_object_uploads WHERE id = ?", arguments: [id.text]) }
    }

    func deleteResumableUploads(createdBefore cutoff: Date) async throws -> [UploadID] {
        try await pool.write { db in
            let ids = try String.fetchAll(db, sql: "SELECT id FROM ferry_object_uploads WHERE created_at < ?", arguments: [Timestamp.format(cutoff)])
            try db.execute(sql: "DELETE FROM ferry_object_uploads WHERE created_at < ?", arguments: [Timestamp.format(cutoff)])
            return ids.compactMap(UploadID.init(parsing:))
        }
    }

    func usage(owner: UUID) async throws -> StorageUsage {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT (SELECT coalesce(sum(size), 0) FROM ferry_objects WHERE owner_id = ?1),
                      (SELECT count(*) FROM ferry_object_uploads WHERE owner_id = ?1),
                      (SELECT coalesce(sum(length), 0) FROM ferry_object_uploads WHERE owner_id = ?1)
                    """,
                arguments: [owner.databaseText]
            )
            return StorageUsage(storedBytes: row?[0] ?? 0, openUploads: row?[1] ?? 0, openUploadBytes: row?[2] ?? 0)
        }
    }

    func objectBlobs() async throws -> Set<BlobKey> {
        try await pool.read { db in
            var keys: Set<BlobKey> = []
            for row in try Row.fetchAll(db, sql: "SELECT DISTINCT space_id, sha256 FROM ferry_objects") {
                if let space = UUID(wireText: row["space_id"]) { keys.insert(BlobKey(space: space, sha256: row["sha256"])) }
            }
            return keys
        }
    }

    static func object(_ row: Row) -> StoredObject? {
        guard let id = UUID(wireText: row["id"]), let space = UUID(wireText: row["space_id"]), let owner = UUID(wireText: row["owner_id"])
        else { return nil }
        return StoredObject(
            id: id, bucket: row["bucket"], name: row["name"], space: space, sha256: row["sha256"], size: row["size"],
            contentType: row["content_type"], cacheControl: row["cache_control"], owner: owner,
            createdAt: Timestamp.parse(row["created_at"]) ?? Date(), updatedAt: Timestamp.parse(row["updated_at"]) ?? Date()
        )
    }
}
