import Foundation
import NIOCore
import PostgresNIO

/// Stores one part of an upload and moves the upload's offset past it, only if it still stands at `offset`; answers
/// the content id the part went under, or no row.
///
/// A prepared statement (each connection prepares it once), not a query: PostgreSQL plans a query anew for its
/// parameters and copies each 1 MiB part into the plan as a constant, where a prepared statement is given one plan for
/// all its values after its first few runs. That planning cost a fifth of an upload's time (`docs/benchmarks.md`). A
/// pooler between the server and PostgreSQL should therefore keep prepared statements (`docs/operations.md`).
struct StoreBlobPart: PostgresPreparedStatement {
    static let name = "ferry_store_blob_part"
    static let sql = """
        WITH moved AS (
          UPDATE ferry_blob_uploads SET received = $1, updated_at = now() WHERE id = $2 AND received = $3 RETURNING content_id
        )
        INSERT INTO ferry_blob_parts (content_id, part_offset, data) SELECT content_id, $3, $4 FROM moved RETURNING content_id
        """

    static var bindingDataTypes: [PostgresDataType] { [.int8, .text, .int8, .bytea] }

    var end: Int64
    var upload: String
    var offset: Int64
    var data: ByteBuffer

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(end)
        bindings.append(upload)
        bindings.append(offset)
        bindings.append(data)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> UUID { try row.decode(UUID.self) }
}
