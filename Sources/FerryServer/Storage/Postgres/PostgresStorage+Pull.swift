import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage {
    func pull(_ cursors: [SpaceCursor], limit: Int, bytes: Int, schema: Schema, format: PullFormat) async throws -> [UUID: PullPage] {
        try await client.withConnection { connection in
            // One snapshot for the whole pull, purge marks included: under READ COMMITTED each statement would see
            // its own, and a commit landing between two collections' reads would be skipped by the cursor.
            try await connection.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            do {
                try await connection.query(PostgresQuery(unsafeSQL: Self.orderedScansOnly), logger: logger)
                var pages = PullPages(limit: limit, bytes: bytes)
                for entry in cursors where pages.remaining > 0 {
                    let page = try await page(connection, entry, limit: pages.remaining, bytes: pages.remainingBytes, schema: schema, format: format)
                    pages.add(page, of: entry.space, after: entry.cursor)
                }
                try await connection.query("COMMIT", logger: logger)
                return pages.pages
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Keeps this transaction's reads on the `(_space, _seq)` index, in order. Right after a large import the table's
    /// statistics are stale, and the planner took a page for a few rows: it read every row after the cursor in a bitmap
    /// scan and sorted them to keep the first `limit`, so an initial sync cost quadratic time (200 ms a page at 80,000
    /// rows instead of 2 ms). A page is always a prefix of the index range, which an index scan reads and stops.
    static let orderedScansOnly = "SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)"

    /// A collection's part of a page: `$1` the space, `$2` the cursor, `$3` the most rows, `$4` the bound when `bounded`.
    static func pageCondition(bounded: Bool) -> String {
        "_space = $1 AND _seq > $2\(PullBound.condition(bounded: bounded, upper: "$4")) ORDER BY _seq LIMIT $3"
    }

    private func page(_ connection: PostgresConnection, _ entry: SpaceCursor, limit: Int, bytes: Int, schema: Schema, format: PullFormat) async throws -> PullPage {
        let (space, cursor) = (entry.space, entry.cursor)
        let rows = try await connection.query("SELECT purged_seq FROM ferry_spaces WHERE id = \(space)", logger: logger)
        let purged = try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0
        if cursor > 0, cursor < purged {
            return PullPage(changes: [], cursor: cursor, hasMore: false, resetRequired: true)
        }
        var bound: Int64?
        if schema.collections.count > 1 {
            var binds = PostgresBindings()
            binds.append(space)
            binds.append(cursor)
            binds.append(Int64(limit + 1))
            binds.append(Int64(limit))
            let sql = PullBound.sql(schema, .postgres, space: "$1", cursor: "$2", take: "$3", skip: "$4")
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            bound = try await rows.decode(Int64.self).first(where: { _ in true })
        }
        var changes = WireChanges(space: space, capacity: limit + 1)
        for collection in schema.collections {
            var binds = PostgresBindings()
            binds.append(space)
            binds.append(cursor)
            binds.append(Int64(limit + 1))
            if let bound { binds.append(bound) }
            try await Self.writeChanges(
                connection, collection, where: Self.pageCondition(bounded: bound != nil), binds: binds, writer: format.writer(for: collection), into: &changes,
                budget: bytes, logger: logger
            )
        }
        return PullPage(sorted: changes, cursor: cursor, limit: limit)
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
