import Foundation
import GRDB

/// The baselines: a collection table's rows inserted with GRDB into an empty copy of that table (its DDL copied
/// from `sqlite_master`), on an on-disk `DatabasePool` (WAL), with one prepared statement — what storing the
/// rows costs with no sync at all.
struct RawInsert {
    enum Transactions {
        /// Every row in one transaction, as a sync page could be.
        case one
        /// One transaction per row, as an app's writes are.
        case perRow
    }

    /// Wall and CPU seconds of the inserts alone.
    struct Timing {
        var seconds: Double
        var cpuSeconds: Double
    }

    let ddl: [String]
    let columns: [String]
    let rows: [[DatabaseValue]]

    /// Reads the definition and the rows of `table` from `source`.
    init(table: String, from source: any DatabaseReader) throws {
        let (ddl, columns, rows) = try source.read { db in
            let ddl = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY type DESC", arguments: [table])
            let columns = try db.columns(in: table).map(\.name)
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier)").map { row in columns.map { row[$0] as DatabaseValue } }
            return (ddl, columns, rows)
        }
        self.ddl = ddl
        self.columns = columns
        self.rows = rows
    }

    /// Creates the table in a new database at `path` and times inserting every row into it.
    func time(into path: URL, table: String, transactions: Transactions) throws -> Timing {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let pool = try DatabasePool(path: path.path(), configuration: configuration)
        try pool.write { db in
            for statement in ddl { try db.execute(sql: statement) }
        }
        let names = columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let sql = "INSERT INTO \(table.quotedDatabaseIdentifier) (\(names)) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        let clock = ContinuousClock()
        let cpu = ProcessMetrics.cpuSeconds()
        let seconds = try clock.measure {
            switch transactions {
            case .one:
                try pool.write { db in
                    let statement = try db.cachedStatement(sql: sql)
                    for row in rows { try statement.execute(arguments: StatementArguments(row)) }
                }
            case .perRow:
                for row in rows {
                    try pool.write { db in try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(row)) }
                }
            }
        }.seconds
        let cpuSeconds = ProcessMetrics.cpuSeconds() - cpu
        let count = try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0 }
        guard count == rows.count else { throw BenchmarkError("the raw insert holds \(count) of \(rows.count) rows") }
        return Timing(seconds: seconds, cpuSeconds: cpuSeconds)
    }
}
