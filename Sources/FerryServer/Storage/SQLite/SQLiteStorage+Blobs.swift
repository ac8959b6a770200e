import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    func referencedBlobs(schema: Schema) async throws -> Set<BlobKey> {
        try await pool.read { db in
            var keys: Set<BlobKey> = []
            for collection in schema.collections {
                let table = SQLDialect.sqlite.quote(collection.name)
                for field in collection.blobFields {
                    let column = SQLDialect.sqlite.quote(field.name)
                    let rows = try Row.fetchCursor(
                        db, sql: "SELECT DISTINCT _space, json_extract(\(column), '$.sha256') FROM \(table) WHERE \(column) IS NOT NULL AND _deleted = 0"
                    )
                    while let row = try rows.next() {
                        guard let space = (row[0] as String?).flatMap(UUID.init(wireText:)), let hash = row[1] as String? else { continue }
                        keys.insert(BlobKey(space: space, sha256: hash))
                    }
                }
            }
            return keys
        }
    }
}
