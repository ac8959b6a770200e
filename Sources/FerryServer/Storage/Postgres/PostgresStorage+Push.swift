import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: RecordStorage {
    func push(_ batch: PushBatch) async throws -> PushOutcome {
        do {
            return try await transactionalPush(batch)
        } catch let error as PostgresTransactionError where error.closureError is PushPlan.Refusal {
            throw error.closureError ?? error
        }
    }

    private func transactionalPush(_ batch: PushBatch) async throws -> PushOutcome {
        try await client.withTransaction(logger: logger) { connection in
            // Lock the device's row, then the spaces in id order: pushes of one device run one at a time, and
            // writers of one space commit in the order of their sequence numbers (a cursor never skips a commit).
            try await connection.query(
                """
                INSERT INTO ferry_device_mutations (user_id, device_id, last_mutation_id, updated_at)
                VALUES (\(batch.userID), \(batch.deviceID), 0, \(batch.now)) ON CONFLICT (user_id, device_id) DO NOTHING
                """,
                logger: logger
            )
            let progressRows = try await connection.query(
                """
                SELECT last_mutation_id FROM ferry_device_mutations
                WHERE user_id = \(batch.userID) AND device_id = \(batch.deviceID) FOR UPDATE
                """,
                logger: logger
            )
            var previous: Int64 = 0
            for try await last in progressRows.decode(Int64.self) { previous = last }
            try PushPlan.requireOrder(batch, previousMutationID: previous)
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
            let spaces = Set(batch.entries.compactMap { try? $0.get().mutation.space }).sorted { $0.uuidString < $1.uuidString }
            if !spaces.isEmpty {
                try await connection.query("SELECT id FROM ferry_spaces WHERE id = ANY(\(spaces)) ORDER BY id FOR UPDATE", logger: logger)
            }
            let (loaded, children) = try await loadRows(connection, for: batch.entries, schema: batch.schema)
            var plan = try PushPlan(batch, previousMutationID: previous, processed: processed, loaded: loaded, children: children)
            let committed = try await write(&plan, connection, now: batch.now, sealedSpaces: batch.sealedSpaces)
            try await connection.query(
                """
                UPDATE ferry_device_mutations SET last_mutation_id = \(plan.lastMutationID), updated_at = \(batch.now)
                WHERE user_id = \(batch.userID) AND device_id = \(batch.deviceID)
                """,
                logger: logger
            )
            if !plan.fingerprints.isEmpty {
                // One round trip: the delete does not see the row inserted beside it, which is above its bound anyway.
                try await connection.query(
                    """
                    WITH added AS (
                      INSERT INTO ferry_device_batches (user_id, device_id, last_mutation_id, fingerprints)
                      VALUES (\(batch.userID), \(batch.deviceID), \(plan.lastMutationID), \(ByteBuffer(bytes: plan.fingerprints.blob)))
                    )
                    DELETE FROM ferry_device_batches WHERE user_id = \(batch.userID) AND device_id = \(batch.deviceID)
                    AND last_mutation_id <= \(plan.lastMutationID - Int64(ProcessedBatch.capacity))
                    """,
                    logger: logger
                )
            }
            return PushOutcome(batch: batch, plan: plan, committed: committed)
        }
    }

    /// The rows a push touches, and every stored descendant of the rows it deletes.
    private func loadRows(
        _ connection: PostgresConnection, for entries: [Result<ValidatedMutation, Rejection>], schema: Schema
    ) async throws -> ([RecordKey: StoredRecord], [RecordKey: [RecordKey]]) {
        var rows = PushRows(entries: entries, schema: schema)
        for (name, group) in Dictionary(grouping: PushPlan.keysToLoad(entries), by: \.collection) {
            guard let collection = schema.collection(named: name) else { continue }
            var binds = PostgresBindings()
            binds.append(group.map(\.id))
            rows.add(try await Self.fetchRecords(connection, collection, where: "id = ANY($1)", binds: binds, logger: logger), collection: name)
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
    /// one upsert per collection, except rows of collections with unique keys: each of those is written alone behind a
    /// savepoint, so a write that breaks a key is rolled back alone and its mutations are rejected.
    private func write(
        _ plan: inout PushPlan, _ connection: PostgresConnection, now: Date, sealedSpaces: Set<UUID>
    ) async throws -> [UUID: Int64] {
        var nextSeq: [UUID: Int64] = [:]
        var committed: [UUID: Int64] = [:]
        for (space, writes) in Dictionary(grouping: plan.writes, by: \.record.space) {
            let rows = try await connection.query(
                "UPDATE ferry_spaces SET seq = seq + \(Int64(writes.count)) WHERE id = \(space) RETURNING seq", logger: logger
            )
            let last = try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0
            nextSeq[space] = last - Int64(writes.count) + 1
            committed[space] = last
        }
        var batches: [String: [(write: PushPlan.Write, seq: Int64)]] = [:]
        var order: [String] = []
        for write in plan.writes {
            let seq = nextSeq[write.record.space, default: 0]
            nextSeq[write.record.space] = seq + 1
            if write.collection.uniqueKeys.isEmpty {
                if batches[write.collection.name] == nil { order.append(write.collection.name) }
                batches[write.collection.name, default: []].append((write, seq))
                continue
            }
            try await connection.query("SAVEPOINT ferry_row", logger: logger)
            do {
                try await Self.writeRecords(connection, write.collection, [(write, seq)], now: now, sealedSpaces: sealedSpaces, logger: logger)
                try await connection.query("RELEASE SAVEPOINT ferry_row", logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                try await connection.query("ROLLBACK TO SAVEPOINT ferry_row", logger: logger)
                plan.reject(write, .uniqueViolation, "Another record in this space has the same \(write.collection.name) unique key.")
            }
        }
        for name in order {
            guard let rows = batches[name], let collection = rows.first?.write.collection else { continue }
            try await Self.writeRecords(connection, collection, rows, now: now, sealedSpaces: sealedSpaces, logger: logger)
        }
        return committed
    }
}
