import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: RecordStorage {
    func push(_ batch: PushBatch) async throws -> PushOutcome {
        let reads = PushReads(batch)
        var speculation = SpeculativePush(batch, reads: reads)
        var retried = false
        while true {
            do {
                // Between its first lock and its commit a push holds up every later push of its device and every
                // writer of its spaces: its continuations run ahead of the server's other work (decoding, replies).
                let attempt = speculation
                return try await Task(priority: .high) { try await transactionalPush(batch, reads: reads, speculation: attempt) }.value
            } catch let error as PostgresTransactionError where error.closureError is PushPlan.Refusal {
                throw error.closureError ?? error
            } catch let error as PostgresTransactionError where error.closureError is IDTaken {
                // A guess that was wrong (a record it took for new is stored), or another space's push stored one of
                // these ids after this one read it missing (that push's locks are not this one's): planned again on the
                // stored rows, the id is found (a stored record merges; another space's refuses its mutation,
                // `space_mismatch`). A race retries once; a second one in a row is contention to retry later.
                guard speculation != nil || !retried else {
                    throw ServiceError(.unavailable, .unavailable, "Other pushes kept storing this push's records meanwhile; retry shortly.", retryAfter: .seconds(1))
                }
                if speculation == nil { retried = true }
                speculation = nil
            }
        }
    }

    /// A push's insert of a row its plan took for new found the id stored: the plan was a guess that read nothing
    /// (``SpeculativePush/readsNothing``), or another space's push stored the id after this one read it missing (that
    /// push's locks are not this one's). Either way the push plans again (see ``push(_:)``).
    struct IDTaken: Error {}

    private func transactionalPush(_ batch: PushBatch, reads: PushReads, speculation: SpeculativePush?) async throws -> PushOutcome {
        try await client.withTransaction(logger: logger) { connection in
            let previous = try await lockProgress(of: batch, connection)
            try PushPlan.requireOrder(batch, previousMutationID: previous)
            var plan: PushPlan
            let layout: WriteLayout
            var encoded: [String: RecordColumns] = [:]
            if let speculation, speculation.readsNothing, speculation.previousMutationID == previous {
                // Nothing to read: every row the plan reads it inserts, so a stored one fails the insert (`IDTaken`).
                (plan, layout, encoded) = (speculation.plan, speculation.layout, speculation.columns)
            } else {
                let (processed, loaded, children) = try await readPlanInputs(batch, reads, previous: previous, connection)
                if let speculation, speculation.holds(previousMutationID: previous, loaded: loaded) {
                    (plan, layout, encoded) = (speculation.plan, speculation.layout, speculation.columns)
                } else {
                    plan = try PushPlan(batch, previousMutationID: previous, processed: processed, loaded: loaded, children: children)
                    layout = WriteLayout(plan)
                }
            }
            let committed = try await write(&plan, layout, connection, now: batch.now, sealedSpaces: batch.sealedSpaces, encoded: encoded)
            try plan.requireWhole(batch)
            try await recordProgress(of: batch, plan, connection)
            return PushOutcome(batch: batch, plan: plan, committed: committed)
        }
    }

    /// Locks the device's progress row (made on its first push) and returns its last processed id: the upsert locks the
    /// row it finds as `FOR UPDATE` would and reads its latest id, in one round trip. Pushes of one device run one at a
    /// time from here; writers of one space, from the lock on its row (taken in id order, so no two pushes deadlock),
    /// commit in the order of their sequence numbers, so a cursor never skips a commit.
    private func lockProgress(of batch: PushBatch, _ connection: PostgresConnection) async throws -> Int64 {
        guard let deviceID = batch.deviceID else { return 0 }
        let rows = try await connection.query(
            """
            INSERT INTO ferry_device_mutations (user_id, device_id, last_mutation_id, updated_at)
            VALUES (\(batch.userID), \(deviceID), 0, \(batch.now))
            ON CONFLICT (user_id, device_id) DO UPDATE SET last_mutation_id = ferry_device_mutations.last_mutation_id
            RETURNING last_mutation_id
            """,
            logger: logger
        )
        var previous: Int64 = 0
        for try await last in rows.decode(Int64.self) { previous = last }
        return previous
    }

    /// What the plan is made from, read under the locks: the device's recent fingerprints when the push carries an id
    /// it processed before, then (the spaces locked) the rows the push touches and the stored descendants of those
    /// it deletes.
    private func readPlanInputs(
        _ batch: PushBatch, _ reads: PushReads, previous: Int64, _ connection: PostgresConnection
    ) async throws -> (ProcessedBatch, [RecordKey: StoredRecord], [RecordKey: [RecordKey]]) {
        var processed = ProcessedBatch()
        if PushPlan.needsProcessed(batch, previousMutationID: previous) {
            let rows = try await connection.query(
                """
                SELECT fingerprints FROM ferry_device_batches
                WHERE user_id = \(batch.userID) AND device_id = \(batch.deviceID) ORDER BY last_mutation_id
                """,
                logger: logger
            )
            var blob: [UInt8] = []
            for try await fingerprints in rows.decode(ByteBuffer.self) { blob += fingerprints.readableBytesView }
            processed = ProcessedBatch(blob: blob)
        }
        if !reads.spaces.isEmpty {
            try await connection.query("SELECT id FROM ferry_spaces WHERE id = ANY(\(reads.spaces)) ORDER BY id FOR UPDATE", logger: logger)
        }
        let (loaded, children) = try await loadRows(connection, reads, batch)
        return (processed, loaded, children)
    }

    /// Moves the device's last processed id to the plan's, and keeps this push's fingerprints in a row of their own,
    /// deleting the rows that fell out of the window (``ProcessedBatch/capacity``): one round trip. The delete does not
    /// see the row inserted beside it, which is above its bound anyway.
    private func recordProgress(of batch: PushBatch, _ plan: PushPlan, _ connection: PostgresConnection) async throws {
        guard let deviceID = batch.deviceID else { return }
        guard !plan.fingerprints.isEmpty else {
            try await connection.query(
                """
                UPDATE ferry_device_mutations SET last_mutation_id = \(plan.lastMutationID), updated_at = \(batch.now)
                WHERE user_id = \(batch.userID) AND device_id = \(deviceID)
                """,
                logger: logger
            )
            return
        }
        try await connection.query(
            """
            WITH progress AS (
              UPDATE ferry_device_mutations SET last_mutation_id = \(plan.lastMutationID), updated_at = \(batch.now)
              WHERE user_id = \(batch.userID) AND device_id = \(deviceID)
            ), added AS (
              INSERT INTO ferry_device_batches (user_id, device_id, last_mutation_id, fingerprints)
              VALUES (\(batch.userID), \(deviceID), \(plan.lastMutationID), \(ByteBuffer(bytes: plan.recordedFingerprints.blob)))
            )
            DELETE FROM ferry_device_batches WHERE user_id = \(batch.userID) AND device_id = \(deviceID)
            AND last_mutation_id <= \(plan.lastMutationID - Int64(ProcessedBatch.capacity))
            """,
            logger: logger
        )
    }

    /// The rows a push touches, and every stored descendant of the rows it deletes.
    private func loadRows(
        _ connection: PostgresConnection, _ reads: PushReads, _ batch: PushBatch
    ) async throws -> ([RecordKey: StoredRecord], [RecordKey: [RecordKey]]) {
        var rows = PushRows(entries: batch.entries, schema: batch.schema)
        for (collection, ids) in reads.keys {
            var binds = PostgresBindings()
            binds.append(ids)
            rows.add(try await Self.fetchRecords(connection, collection, where: "id = ANY($1)", binds: binds, logger: logger), collection: collection.name)
        }
        while let query = rows.nextChildQuery() {
            var binds = PostgresBindings()
            binds.append(query.parent.id)
            binds.append(query.space)
            let condition = "\(SQLDialect.postgres.quote(query.field)) = $1 AND _space = $2"
            rows.addChildren(try await Self.fetchRecords(connection, query.collection, where: condition, binds: binds, logger: logger), of: query)
        }
        return (rows.loaded, rows.children)
    }

    /// Writes the plan's rows. Each space's sequence numbers come from one locked update; rows are written with
    /// one insert of the new rows and one upsert of the stored ones per collection (columns from `encoded` when the plan
    /// was made before the transaction), except rows of collections with unique keys: each of those is written alone
    /// behind a savepoint, so a write that breaks a key is rolled back alone and its mutations are rejected.
    private func write(
        _ plan: inout PushPlan, _ layout: WriteLayout, _ connection: PostgresConnection, now: Date, sealedSpaces: Set<UUID>,
        encoded: [String: RecordColumns]
    ) async throws -> [UUID: Int64] {
        var firstSeq: [UUID: Int64] = [:]
        var committed: [UUID: Int64] = [:]
        for (space, count) in layout.counts {
            let rows = try await connection.query("UPDATE ferry_spaces SET seq = seq + \(count), changed_at = \(now) WHERE id = \(space) RETURNING seq", logger: logger)
            let last = try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0
            firstSeq[space] = last - count + 1
            committed[space] = last
        }
        let seq = { [firstSeq] (slot: WriteLayout.Slot) in firstSeq[slot.space, default: 0] + slot.offset }
        for (write, slot) in layout.keyed {
            try await connection.query("SAVEPOINT ferry_row", logger: logger)
            do {
                let columns = try RecordColumns(write.collection, writes: [write], sealedSpaces: sealedSpaces)
                // A row the plan found nowhere is inserted, not upserted, here too: an id another space stored meanwhile
                // must fail (`IDTaken`), not move that record into this space.
                try await Self.writeRecords(connection, columns, seqs: [seq(slot)], isNew: write.isNew, now: now, logger: logger)
                try await connection.query("RELEASE SAVEPOINT ferry_row", logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                try await connection.query("ROLLBACK TO SAVEPOINT ferry_row", logger: logger)
                if Self.breaksPrimaryKey(error, of: write.collection) { throw IDTaken() }
                plan.reject(write, .uniqueViolation, "Another record in this space has the same \(write.collection.name) unique key.")
            }
        }
        for batch in layout.batches {
            if let columns = encoded[batch.collection.name] {
                try await insertNew(connection, columns, seqs: batch.slots.map(seq), now: now)
                continue
            }
            for isNew in [true, false] {
                let indexes = batch.writes.indices.filter { batch.writes[$0].isNew == isNew }
                guard !indexes.isEmpty else { continue }
                let columns = try RecordColumns(batch.collection, writes: indexes.map { batch.writes[$0] }, sealedSpaces: sealedSpaces)
                let seqs = indexes.map { seq(batch.slots[$0]) }
                if isNew {
                    try await insertNew(connection, columns, seqs: seqs, now: now)
                } else {
                    try await Self.writeRecords(connection, columns, seqs: seqs, isNew: false, now: now, logger: logger)
                }
            }
        }
        return committed
    }

    /// Whether a unique violation is of the collection's id rather than of a unique key: the constraint is the table's
    /// primary key, under the name PostgreSQL gives it (`<table>_pkey`, the table's name cut to fit 63 bytes). Any
    /// other index, even one this server's schema does not know (a newer server added it), rejects the mutation.
    private static func breaksPrimaryKey(_ error: PSQLError, of collection: CollectionDefinition) -> Bool {
        let suffix = "_pkey"
        let name = String(decoding: collection.name.utf8.prefix(Identifier.maximumLength - suffix.utf8.count), as: UTF8.self) + suffix
        return error.serverInfo?[.constraintName] == name
    }

    /// Inserts rows the plan found nowhere; an id stored meanwhile is ``IDTaken``.
    private func insertNew(_ connection: PostgresConnection, _ columns: RecordColumns, seqs: [Int64], now: Date) async throws {
        do {
            try await Self.writeRecords(connection, columns, seqs: seqs, isNew: true, now: now, logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw IDTaken()
        }
    }
}
