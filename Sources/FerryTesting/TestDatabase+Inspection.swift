import FerryServer
import Foundation
import GRDB
import Logging
import PostgresNIO

/// Direct access to a test database, bypassing the server, to check what it really holds.
extension TestDatabase {
    /// The columns of `table`, by name, with the engine's own type names (lowercased).
    public func columns(of table: String) async throws -> [String: String] {
        switch location {
        case .sqlite(let path):
            return try await DatabaseQueue(path: path).read { db in
                var columns: [String: String] = [:]
                for column in try db.columns(in: table) { columns[column.name] = column.type.lowercased() }
                return columns
            }
        case .postgres:
            var columns: [String: String] = [:]
            try await onConnection { connection, logger in
                let rows = try await connection.query(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = \(table)", logger: logger
                )
                for try await (name, type) in rows.decode((String, String).self) { columns[name] = type.lowercased() }
            }
            return columns
        }
    }

    /// The names of the tables in the database.
    public func tableNames() async throws -> Set<String> {
        switch location {
        case .sqlite(let path):
            return try await DatabaseQueue(path: path).read { db in
                Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
            }
        case .postgres:
            var names: Set<String> = []
            try await onConnection { connection, logger in
                let rows = try await connection.query(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'", logger: logger
                )
                for try await name in rows.decode(String.self) { names.insert(name) }
            }
            return names
        }
    }

    /// Runs statements in one transaction; throws the engine's error when one fails.
    public func execute(_ statements: [String]) async throws {
        switch location {
        case .sqlite(let path):
            try await DatabaseQueue(path: path).write { db in
                for statement in statements { try db.execute(sql: statement) }
            }
        case .postgres:
            try await onConnection { connection, logger in
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
            }
        }
    }

    func onConnection(_ body: (PostgresConnection, Logger) async throws -> Void) async throws {
        guard case .postgres(let url) = location else { return }
        try await Self.withConnection(to: url, body)
    }
}

extension TestDatabase {
    /// Makes a PostgreSQL test database refuse new connections and drops the open ones (or lets
    /// them back in), to test how the server behaves when its database goes away.
    public func setRefusingConnections(_ isRefusing: Bool) async throws {
        guard case .postgres(let url) = location else {
            throw TestSupportError("only a PostgreSQL test database can refuse connections")
        }
        try await Self.withConnection(to: try Self.adminURL()) { connection, logger in
            try await connection.query(
                PostgresQuery(unsafeSQL: "ALTER DATABASE \"\(url.database)\" ALLOW_CONNECTIONS \(isRefusing ? "false" : "true")"),
                logger: logger
            )
            if isRefusing {
                try await connection.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(url.database)", logger: logger
                )
            }
        }
    }
}

extension TestDatabase {
    /// The integer the query `sql` returns in its first row and column (a count, a maximum), or 0 when none.
    public func integer(_ sql: String) async throws -> Int64 {
        switch location {
        case .sqlite(let path):
            return try await DatabaseQueue(path: path).read { db in try Int64.fetchOne(db, sql: sql) ?? 0 }
        case .postgres:
            var value: Int64 = 0
            try await onConnection { connection, logger in
                let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                for try await number in rows.decode(Int64.self) { value = number }
            }
            return value
        }
    }
}

extension TestDatabase {
    /// The texts the query `sql` returns in the first column of each row (names, ids), run in one transaction after the
    /// statements of `setup` (settings, an `EXPLAIN`'s preconditions).
    public func strings(_ sql: String, after setup: [String] = []) async throws -> [String] {
        switch location {
        case .sqlite(let path):
            return try await DatabaseQueue(path: path).write { db in
                for statement in setup { try db.execute(sql: statement) }
                return try String.fetchAll(db, sql: sql)
            }
        case .postgres:
            var values: [String] = []
            try await onConnection { connection, logger in
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in setup { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    for try await text in rows.decode(String.self) { values.append(text) }
                }
            }
            return values
        }
    }
}

extension TestDatabase {
    /// PostgreSQL only: runs `statements` in a transaction that stays open while `body` runs and commits after it, so a
    /// test can make the server meet rows another writer has stored but not yet committed.
    public func whileUncommitted(_ statements: [String], _ body: () async throws -> Void) async throws {
        guard case .postgres(let url) = location else {
            throw TestSupportError("only a PostgreSQL test database holds a transaction open for a test")
        }
        try await Self.withConnection(to: url) { connection, logger in
            try await connection.query("BEGIN", logger: logger)
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await body()
            try await connection.query("COMMIT", logger: logger)
        }
    }

    /// PostgreSQL only: waits until a statement starting with `prefix` waits on a lock (another transaction's row),
    /// for at most `timeout`; whether it did.
    public func waitForLockWait(of prefix: String, timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        let pattern = prefix.replacingOccurrences(of: "'", with: "''") + "%"
        while ContinuousClock.now < deadline {
            let waiting = try await integer("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '\(pattern)'")
            if waiting > 0 { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
