import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage {
    func referencedBlobs(schema: Schema) async throws -> Set<BlobKey> {
        var keys: Set<BlobKey> = []
        for collection in schema.collections {
            let table = SQLDialect.postgres.quote(collection.name)
            for field in collection.blobFields {
                let column = SQLDialect.postgres.quote(field.name)
                let rows = try await client.query(
                    PostgresQuery(unsafeSQL: "SELECT DISTINCT _space, \(column) ->> 'sha256' FROM \(table) WHERE \(column) IS NOT NULL AND NOT _deleted"),
                    logger: logger
                )
                for try await (space, hash) in rows.decode((UUID, String?).self) {
                    if let hash { keys.insert(BlobKey(space: space, sha256: hash)) }
                }
            }
        }
        return keys
    }
}
