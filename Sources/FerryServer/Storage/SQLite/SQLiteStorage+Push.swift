import FerryCore
import FerryGRDB
import Foundation
import GRDB

extension SQLiteStorage: RecordStorage {
    func push(_ batch: PushBatch) async throws -> PushOutcome {
        // Planned and encoded before the writer, which every push of every device waits for (``PlanGuess``).
        let updatedAt = Timestamp.format(batch.now)
        let prepared = PlanGuess(batch).flatMap { guess in
            (try? Self.rowValues(of: guess.plan, updatedAt: updatedAt, sealedSpaces: batch.sealedSpaces)).map { (guess: guess, values: $0) }
        }
        return try await pool.write { db in
            let device: StatementArguments = [batch.userID.databaseText, batch.deviceID?.databaseText]
            let previous = batch.deviceID == nil ? 0 : try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT last_mutation_id FROM ferry_device_mutations WHERE user_id = ? AND device_id = ?"),
                arguments: device
            ) ?? 0
            try PushPlan.requireOrder(batch, previousMutationID: previous)
            var processed = ProcessedBatch()
            if PushPlan.needsProcessed(batch, previousMutationID: previous) {
                let rows = try Data.fetchAll(
                    db, sql: "SELECT fingerprints FROM ferry_device_batches WHERE user_id = ? AND device_id = ? ORDER BY last_mutation_id",
                    arguments: device
                )
                processed = ProcessedBatch(blob: rows.flatMap { [UInt8]($0) })
            }
            let (loaded, children) = try Self.loadRows(db, for: batch.entries, schema: batch.schema)
            var plan: PushPlan
            var values: [[DatabaseValue]]
            if let prepared, prepared.guess.holds(previousMutationID: previous, loaded: loaded) {
                (plan, values) = (prepared.guess.plan, prepared.values)
            } else {
                plan = try PushPlan(batch, previousMutationID: previous, processed: processed, loaded: loaded, children: children)
                values = try Self.rowValues(of: plan, updatedAt: updatedAt, sealedSpaces: batch.sealedSpaces)
            }
            let committed = try Self.write(&plan, values: &values, changedAt: batch.now, db)
            try plan.requireWhole(batch)
            guard batch.deviceID != nil else { return PushOutcome(batch: batch, plan: plan, committed: committed) }
            try db.cachedStatement(sql: """
                INSERT INTO ferry_device_mutations (user_id, device_id, last_mutation_id, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (user_id, device_id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, updated_at = excluded.updated_at
                """).execute(arguments: device + [plan.lastMutationID, updatedAt])
            if !plan.fingerprints.isEmpty {
                try db.cachedStatement(sql: """
                    INSERT INTO ferry_device_batches (user_id, device_id, last_mutation_id, fingerprints) VALUES (?, ?, ?, ?)
                    """).execute(arguments: device + [plan.lastMutationID, Data(plan.recordedFingerprints.blob)])
                try db.cachedStatement(sql: """
                    DELETE FROM ferry_device_batches WHERE user_id = ? AND device_id = ? AND last_mutation_id <= ?
                    """).execute(arguments: device + [plan.lastMutationID - Int64(ProcessedBatch.capacity)])
            }
            return PushOutcome(batch: batch, plan: plan, committed: committed)
        }
    }

    /// The rows a push touches, and every stored descendant of the rows it deletes.
    private static func loadRows(
        _ db: Database, for entries: [Result<ValidatedMutation, Rejection>], schema: Schema
    ) throws -> ([RecordKey: StoredRecord], [RecordKey: [RecordKey]]) {
        var rows = PushRows(entries: entries, schema: schema)
        for (name, group) in Dictionary(grouping: PushPlan.keysToLoad(entries), by: \.collection) {
            guard let collection = schema.collection(named: name) else { continue }
            // The ids as one JSON array: one statement per collection, prepared once, whatever the push's size.
            let ids = "[" + group.map { "\"\($0.id.databaseText)\"" }.joined(separator: ",") + "]"
            rows.add(try fetchRecords(db, collection, where: "id IN (SELECT value FROM json_each(?))", arguments: [ids]), collection: name)
        }
        while let query = rows.nextChildQuery() {
            let condition = "\(SQLDialect.sqlite.quote(query.field)) = ? AND _space = ?"
            let arguments: StatementArguments = [query.parent.id.databaseText, query.space.databaseText]
            rows.addChildren(try fetchRecords(db, query.collection, where: condition, arguments: arguments), of: query)
        }
        return (rows.loaded, rows.children)
    }

    /// Each of the plan's rows as ``upsertStatement(_:_:)`` binds it, its sequence number left for the write.
    private static func rowValues(of plan: PushPlan, updatedAt: String, sealedSpaces: Set<UUID>) throws -> [[DatabaseValue]] {
        try plan.writes.indices.map { index in
            try rowValues(plan.writes[index], updatedAt: updatedAt, isSealed: sealedSpaces.contains(plan.writes[index].record.space))
        }
    }

    /// Writes the plan's rows (`values`, from ``rowValues(of:updatedAt:sealedSpaces:)``), each with the next sequence
    /// number of its space (one update per space reserves them all). A write that breaks a unique key is rolled back
    /// alone and its mutations are rejected; its number stays unused, which a cursor does not mind. Returns each
    /// space's last sequence number.
    private static func write(_ plan: inout PushPlan, values: inout [[DatabaseValue]], changedAt now: Date, _ db: Database) throws -> [UUID: Int64] {
        var nextSeq: [UUID: Int64] = [:]
        var committed: [UUID: Int64] = [:]
        for (space, count) in plan.rowsPerSpace {
            let last = try Int64.fetchOne(
                db, sql: "UPDATE ferry_spaces SET seq = seq + ?, changed_at = ? WHERE id = ? RETURNING seq", arguments: [count, now, space.databaseText]
            ) ?? 0
            nextSeq[space] = last - count + 1
            committed[space] = last
        }
        // The statement of the collection before: most rows of a push are of one collection, and looking the statement
        // up by its text for each row hashed that text each time.
        var last: (collection: String, statement: Statement)?
        func statement(_ collection: CollectionDefinition) throws -> Statement {
            if let last, last.collection == collection.name { return last.statement }
            let statement = try upsertStatement(db, collection)
            last = (collection.name, statement)
            return statement
        }
        // By index, reading what each row needs: a copy of a write retains its collection definition's every name.
        for index in plan.writes.indices {
            let space = plan.writes[index].record.space
            let seq = nextSeq[space, default: 0]
            nextSeq[space] = seq + 1
            values[index][seqColumn] = seq.databaseValue
            guard !plan.writes[index].collection.uniqueKeys.isEmpty else {
                try statement(plan.writes[index].collection).execute(columns: values[index])
                continue
            }
            let write = plan.writes[index]
            let upsert = try statement(write.collection)
            do {
                try db.inSavepoint {
                    try upsert.execute(columns: values[index])
                    return .commit
                }
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                // GRDB drops a failed statement from its cache without resetting it, and resetting it again traps:
                // the next row prepares its own.
                last = nil
                plan.reject(write, .uniqueViolation, "Another record in this space has the same \(write.collection.name) unique key.")
            }
        }
        return committed
    }
}
