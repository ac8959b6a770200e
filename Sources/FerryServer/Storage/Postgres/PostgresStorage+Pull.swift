import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage {
    func pull(space: UUID, after cursor: Int64, limit: Int, schema: Schema) async throws -> PullPage {
        try await client.withConnection { connection in
            let rows = try await connection.query("SELECT purged_seq FROM ferry_spaces WHERE id = \(space)", logger: logger)
            let purged = try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0
            if cursor > 0, cursor < purged {
                return PullPage(changes: [], cursor: cursor, hasMore: false, resetRequired: true)
            }
            var changes: [Change] = []
            for collection in schema.collections {
                var binds = PostgresBindings()
                binds.append(space)
                binds.append(cursor)
                binds.append(Int64(limit + 1))
                let found = try await Self.fetchRecords(
                    connection, collection, where: "_space = $1 AND _seq > $2 ORDER BY _seq LIMIT $3", binds: binds, logger: logger
                )
                changes += found.map { Change(space: space, collection: collection.name, id: $0.id, seq: $0.seq, record: $0.record) }
            }
            return PullPage(sorted: changes, cursor: cursor, limit: limit)
        }
    }

    func purgeTombstones(before cutoff: Date, schema: Schema) async throws -> Int {
        var purged = 0
        for collection in schema.collections {
            let table = SQLDialect.postgres.quote(collection.name)
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        WITH gone AS (DELETE FROM \(table) WHERE _deleted AND _updated_at < $1 RETURNING _space, _seq),
                        marks AS (SELECT _space, max(_seq) AS seq, count(*) AS n FROM gone GROUP BY _space),
                        raised AS (UPDATE ferry_spaces s SET purged_seq = greatest(s.purged_seq, marks.seq) FROM marks WHERE s.id = marks._space)
                        SELECT coalesce(sum(n), 0)::bigint FROM marks
                        """,
                    binds: { var binds = PostgresBindings(); binds.append(cutoff); return binds }()
                ),
                logger: logger
            )
            purged += Int(try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0)
        }
        return purged
    }
}
