import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    func pull(_ cursors: [SpaceCursor], limit: Int, bytes: Int, schema: Schema, format: PullFormat) async throws -> [UUID: PullPage] {
        // One read transaction: every space and its purge mark from one snapshot.
        try await pool.read { db in
            var pages = PullPages(limit: limit, bytes: bytes)
            for entry in cursors where pages.remaining > 0 {
                let page = try Self.page(db, entry, limit: pages.remaining, bytes: pages.remainingBytes, schema: schema, format: format)
                pages.add(page, of: entry.space, after: entry.cursor)
            }
            return pages.pages
        }
    }

    /// A space's page; each collection's rows stop once they spent more than `bytes` (``WireChanges/spent(_:since:)``).
    private static func page(_ db: Database, _ entry: SpaceCursor, limit: Int, bytes: Int, schema: Schema, format: PullFormat) throws -> PullPage {
        let (space, cursor) = (entry.space, entry.cursor)
        let purged = try Int64.fetchOne(db, sql: "SELECT purged_seq FROM ferry_spaces WHERE id = ?", arguments: [space.databaseText]) ?? 0
        if cursor > 0, cursor < purged {
            return PullPage(changes: [], cursor: cursor, hasMore: false, resetRequired: true)
        }
        var bound: Int64?
        if schema.collections.count > 1 {
            let sql = PullBound.sql(schema, .sqlite, space: "?", cursor: "?", take: "?", skip: "?")
            var arguments: StatementArguments = []
            for _ in schema.collections { arguments += [space.databaseText, cursor, limit + 1] }
            bound = try Int64.fetchOne(db, sql: sql, arguments: arguments + [limit])
        }
        var changes = WireChanges(space: space, capacity: limit + 1)
        for collection in schema.collections {
            var arguments: StatementArguments = [space.databaseText, cursor]
            if let bound { arguments += [bound] }
            let rows = try recordCursor(
                db, collection, where: "_space = ? AND _seq > ?\(PullBound.condition(bounded: bound != nil, upper: "?")) ORDER BY _seq LIMIT ?",
                arguments: arguments + [limit + 1]
            )
            let writer = format.writer(for: collection)
            let types = collection.fields.map { collection.storedType(of: $0) }
            let start = changes.byteCount
            while let row = try rows.next() {
                // Checked once another row exists, so a cut page always has more to read.
                if changes.spent(bytes, since: start) { break }
                if writeChange(row, types: types, writer: writer, into: &changes) { continue }
                guard let found = storedRecord(row, collection: collection, forWire: true) else { continue }
                changes.append(Change(space: space, collection: collection.name, id: found.id, seq: found.seq, record: found.record), with: writer)
            }
        }
        return PullPage(sorted: changes, cursor: cursor, limit: limit)
    }

    func purgeTombstones(before cutoff: Date, schema: Schema) async throws -> Int {
        try await pool.write { db in
            var purged = 0
            for collection in schema.collections {
                let table = SQLDialect.sqlite.quote(collection.name)
                try db.execute(
                    sql: """
                        UPDATE ferry_spaces SET purged_seq = MAX(purged_seq, (
                          SELECT MAX(_seq) FROM \(table) WHERE _space = ferry_spaces.id AND _deleted = 1 AND _updated_at < ?))
                        WHERE EXISTS (SELECT 1 FROM \(table) WHERE _space = ferry_spaces.id AND _deleted = 1 AND _updated_at < ?)
                        """,
                    arguments: [Timestamp.format(cutoff), Timestamp.format(cutoff)]
                )
                try db.execute(sql: "DELETE FROM \(table) WHERE _deleted = 1 AND _updated_at < ?", arguments: [Timestamp.format(cutoff)])
                purged += db.changesCount
            }
            return purged
        }
    }
}
