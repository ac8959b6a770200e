import FerryServer
import Foundation
import GRDB
import Logging
import PostgresNIO

extension TestDatabase {
    /// Every row of every table as text, one line per row (blobs as base64 and as their raw bytes read as
    /// Latin-1), so a test can search the whole database for a value that must not be there.
    public func dump() async throws -> String {
        switch location {
        case .sqlite(let path):
            return try await DatabaseQueue(path: path).read { db in
                var lines: [String] = []
                for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                    for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                        let cells = row.databaseValues.map { value -> String in
                            switch value.storage {
                            case .blob(let data): data.base64EncodedString() + " " + String(decoding: data, as: UTF8.self)
                            default: value.description
                            }
                        }
                        lines.append("\(table): " + cells.joined(separator: " | "))
                    }
                }
                return lines.joined(separator: "\n")
            }
        case .postgres:
            var lines: [String] = []
            let tables = try await tableNames()
            try await onConnection { connection, logger in
                for table in tables.sorted() {
                    let rows = try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT row_to_json(_row)::text FROM \"\(table)\" _row"), logger: logger
                    )
                    for try await text in rows.decode(String.self) { lines.append("\(table): \(text)") }
                }
            }
            return lines.joined(separator: "\n")
        }
    }
}
