import FerryCore
import Foundation
import GRDB
import Logging

/// Health checks and recovery.
extension LocalStore {
    /// Checks the database file (`PRAGMA integrity_check`), the cursors and the outbox; changes nothing.
    public func doctor() throws -> StoreHealthReport {
        let schema = self.schema
        return try read { db in
            var problems: [StoreHealthReport.Problem] = []
            func problem(_ code: String, _ message: String) {
                problems.append(.init(code: code, message: message))
            }
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            if integrity != ["ok"] {
                problem("integrity", "SQLite's integrity check failed: \(integrity.prefix(3).joined(separator: "; ")).")
            }
            var cursors: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT space, seq FROM ferry_cursors") {
                let space: String = row["space"], seq: Int64 = row["seq"]
                cursors[space] = seq
                if UUID(uuidString: space) == nil { problem("unknown_space", "A cursor names '\(space)', which is not a space id.") }
                if seq < 0 { problem("negative_cursor", "The cursor of space \(space) is negative (\(seq)).") }
            }
            for collection in schema.collections {
                let table = Self.quote(collection.name)
                let rows = try Row.fetchAll(db, sql: "SELECT _space, MAX(_seq) AS seq FROM \(table) WHERE _seq > 0 GROUP BY _space")
                for row in rows {
                    let space: String = row["_space"], seq: Int64 = row["seq"]
                    guard let cursor = cursors[space] else {
                        problem("rows_without_cursor", "'\(collection.name)' holds pulled rows of space \(space), which has no cursor.")
                        continue
                    }
                    if seq > cursor {
                        problem("cursor_behind_rows", "'\(collection.name)' holds a row of space \(space) at seq \(seq), past its cursor \(cursor).")
                    }
                }
            }
            let known = Set(schema.collections.map(\.name))
            for name in try String.fetchAll(db, sql: "SELECT DISTINCT collection FROM ferry_outbox") where !known.contains(name) {
                problem("unknown_collection_in_outbox", "The outbox holds writes to '\(name)', which the schema lacks.")
            }
            let maxID = try Int64.fetchOne(db, sql: "SELECT MAX(mutation_id) FROM ferry_outbox") ?? 0
            let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'ferry_outbox'") ?? 0
            if maxID > sequence {
                problem("outbox_order", "Outbox ids run past their sequence (\(maxID) > \(sequence)); new writes could reuse an id.")
            }
            return StoreHealthReport(
                problems: problems,
                pendingCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ferry_outbox") ?? 0,
                rejectedCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ferry_rejections") ?? 0,
                spaceCount: cursors.count
            )
        }
    }

    /// After leaving `space` (or being removed from it): drops its synced rows, its cursor and its keys, so the device
    /// no longer shows what it can no longer sync. Unsent writes to it stay in the outbox; the server refuses them
    /// (`forbidden_space`) and they are kept as rejections, never silently lost.
    public func forgetSpace(_ space: UUID) throws {
        try write { db in
            try dropSyncedRows(db, space: space)
            try db.execute(sql: "DELETE FROM ferry_cursors WHERE space = ?", arguments: [Self.text(space)])
            try db.execute(sql: "DELETE FROM ferry_space_keys WHERE space = ?", arguments: [Self.text(space)])
            try db.execute(sql: "DELETE FROM ferry_secrets WHERE space = ?", arguments: [Self.text(space)])
        }
    }

    /// Recovery: drops every synced row without a pending edit and every cursor, so the next sync pulls all
    /// spaces from 0. The outbox (and so every unsent write) is kept, as are rejections and the device clock.
    public func resetAndResync() throws {
        try write { db in
            try dropSyncedRows(db, space: nil)
            try db.execute(sql: "DELETE FROM ferry_cursors")
        }
        logger.notice("reset the store's cursors for a full resync")
    }
}
