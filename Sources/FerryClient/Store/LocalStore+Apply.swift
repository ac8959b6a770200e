import FerryCore
import Foundation
import GRDB
import Logging

/// Applying pulled changes: one generic path for every collection, children included.
extension LocalStore {
    /// What applying one pull did.
    package struct ApplyOutcome: Sendable, Hashable {
        /// Rows whose merge changed something (new rows included).
        package var applied: Int
        /// Spaces that were reset because the server asked (`resetRequired`).
        package var reset: [UUID]
    }

    /// The cursor of each space this device has pulled.
    package func cursors() throws -> [UUID: Int64] {
        try read { db in
            var cursors: [UUID: Int64] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT space, seq FROM ferry_cursors")) {
                if let space = UUID(uuidString: row["space"] as String) { cursors[space] = row["seq"] as Int64 }
            }
            return cursors
        }
    }

    /// Applies a pull's reply in one transaction together with the cursor advance.
    ///
    /// Spaces in `resetRequired` first lose their rows that have no pending outbox entry and restart at
    /// cursor 0 (the outbox is kept). Each change is merged with ``FerryCore/RecordState/merge(_:)`` against
    /// the local row's clocks, so pending local edits survive; a change that tombstones a record tombstones
    /// its local children too. Every pulled clock is observed by the device's clock.
    ///
    /// - Throws: ``StoreError`` `schema_outdated` (changing nothing) when a change names a collection or field
    ///   the store's schema lacks: migrate to the server's schema, then apply again.
    @discardableResult
    package func apply(_ response: PullResponse) throws -> ApplyOutcome {
        try write { db in try apply(response, in: db) }
    }

    /// ``apply(_:)`` inside a write transaction: the sync engine runs it through ``write(_:)-swift.method``.
    package func apply(_ response: PullResponse, in db: Database) throws -> ApplyOutcome {
        let schema = self.schema
        for change in response.changes {
            guard let collection = schema.collection(named: change.collection) else {
                throw StoreError(code: .schemaOutdated, message: "A pulled change is in collection '\(change.collection)', which this device's schema lacks.")
            }
            if let unknown = change.fields.keys.first(where: { collection.field(named: $0) == nil }) {
                throw StoreError(code: .schemaOutdated, message: "A pulled change has field '\(change.collection).\(unknown)', which this device's schema lacks.")
            }
        }
        do {
            let resets = Set(response.resetRequired)
            for space in resets {
                try dropSyncedRows(db, space: space)
            }
            var clock = try loadClock(db)
            var applied = 0
            let stored = try storedIDs(db, of: response.changes)
            let updatedAt = Timestamp.format(now())
            for change in response.changes {
                let collection = try self.collection(named: change.collection)
                for stamp in change.clocks.values { clock.observe(stamp) }
                let isNew = stored[change.collection]?.contains(change.id) != true
                if try merge(db, change, into: collection, isNew: isNew, updatedAt: updatedAt) { applied += 1 }
            }
            try saveClock(db, clock)
            for (space, seq) in response.cursors {
                // Never back: changes a realtime poke carried may have moved the cursor past this reply's meanwhile.
                if resets.contains(space) { try setCursor(db, space: space, seq: 0) } else { try advanceCursor(db, space: space, to: seq) }
            }
            for space in resets where response.cursors[space] == nil {
                try setCursor(db, space: space, seq: 0)
            }
            return ApplyOutcome(applied: applied, reset: response.resetRequired)
        }
    }

    /// Which of the changes' records this device stores already, read a few hundred ids per query: a first sync
    /// is all new rows, and a point `SELECT` per row to find that out was a tenth of its cost.
    private func storedIDs(_ db: Database, of changes: [Change]) throws -> [String: Set<UUID>] {
        var stored: [String: Set<UUID>] = [:]
        for (name, group) in Dictionary(grouping: changes, by: { $0.collection }) {
            let ids = group.map { Self.text($0.id) }
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                let sql = "SELECT id FROM \(Self.quote(name)) WHERE id IN (\(placeholders))"
                // A realtime poke's few changes ask the same few statements again and again: those are kept.
                let statement = chunk.count <= 8 ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
                for text in try String.fetchAll(statement, arguments: StatementArguments(chunk)) {
                    if let id = UUID(wireText: text) { stored[name, default: []].insert(id) }
                }
            }
        }
        return stored
    }

    /// Merges one change into its row (`isNew`: the row is known not to exist); whether anything changed.
    ///
    /// Rows that exist are read here, one at a time, not with ``storedIDs(_:of:)``: a delete earlier in the page may
    /// have hidden them since.
    private func merge(_ db: Database, _ change: Change, into collection: CollectionDefinition, isNew: Bool, updatedAt: String) throws -> Bool {
        guard !isNew, let existing = try loadRecord(db, collection, id: change.id) else {
            var fields: [String: JSONValue] = [:]
            for field in collection.fields {
                guard let value = change.fields[field.name] else { continue }
                fields[field.name] = (try? FieldValue.normalized(value, for: field)) ?? value
            }
            let record = LocalRecord(
                collection: collection.name, id: change.id, space: change.space, fields: fields, clocks: change.clocks,
                isDeleted: change.deleted, seq: change.seq
            )
            // A new row holds exactly the change's clocks: store the text they came as, if the change kept it.
            try saveRecord(db, record, in: collection, updatedAt: updatedAt, clocksText: change.clocksText)
            if !change.deleted { try queueDownloads(db, space: change.space, collection: collection, fields: fields) }
            return true
        }
        // A row hidden by a local cascade is live underneath until the server says otherwise.
        let isHidden = try existing.isDeleted && isHiddenByCascade(db, collection.name, change.id)
        var state = existing.state
        if isHidden { state.isDeleted = false }
        let changed = state.merge(change.state)
        var isDeleted = state.isDeleted
        if isHidden {
            if change.clocks[RecordState.deletedKey] != nil {
                try forgetCascade(db, collection.name, change.id)  // the server's own verdict on this record
            } else {
                isDeleted = true
            }
        }
        let seq = max(existing.seq, change.seq)
        if changed || isDeleted != existing.isDeleted {
            var updated = existing
            updated.fields = state.fields
            updated.clocks = state.clocks
            updated.isDeleted = isDeleted
            updated.seq = seq
            try saveRecord(db, updated, in: collection, updatedAt: updatedAt)
            if !isDeleted { try queueDownloads(db, space: existing.space, collection: collection, fields: change.fields) }
            if isDeleted && !existing.isDeleted {
                try hideChildren(db, of: change.id, in: collection)
            } else if !isDeleted && existing.isDeleted {
                // A later undelete won over a delete: what that delete hid on this device comes back.
                try restoreChildren(db, of: change.id, in: collection)
            }
        } else if seq != existing.seq {
            try db.cachedStatement(sql: "UPDATE \(Self.quote(collection.name)) SET _seq = ? WHERE id = ?").execute(arguments: [seq, Self.text(change.id)])
        }
        return changed || isDeleted != existing.isDeleted
    }

    /// The cursor of `space`, `nil` before its first pull.
    package func cursor(of space: UUID, in db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM ferry_cursors WHERE space = ?"), arguments: [Self.text(space)])
    }

    /// Moves the cursor of `space` to `seq` unless it is there or past it already.
    func advanceCursor(_ db: Database, space: UUID, to seq: Int64) throws {
        try db.cachedStatement(sql: "INSERT INTO ferry_cursors (space, seq) VALUES (?, ?) ON CONFLICT (space) DO UPDATE SET seq = max(seq, excluded.seq)")
            .execute(arguments: [Self.text(space), seq])
    }

    func setCursor(_ db: Database, space: UUID, seq: Int64) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO ferry_cursors (space, seq) VALUES (?, ?)").execute(arguments: [Self.text(space), seq])
    }

    /// Deletes the rows of `space` (every space when `nil`) that have no pending outbox entry.
    func dropSyncedRows(_ db: Database, space: UUID?) throws {
        for collection in schema.collections {
            let table = Self.quote(collection.name)
            var sql = "DELETE FROM \(table) WHERE id NOT IN (SELECT record_id FROM ferry_outbox WHERE collection = ?)"
            var arguments: [DatabaseValue] = [collection.name.databaseValue]
            if let space {
                sql += " AND _space = ?"
                arguments.append(Self.text(space).databaseValue)
            }
            try db.execute(sql: sql, arguments: StatementArguments(arguments))
            try db.execute(
                sql: "DELETE FROM ferry_cascades WHERE collection = ? AND record_id NOT IN (SELECT id FROM \(table))",
                arguments: [collection.name]
            )
        }
        logger.notice("dropped synced rows for a full resync", metadata: ["ferry.space": "\(space.map(Self.text) ?? "all")"])
    }
}
