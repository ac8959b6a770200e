import FerryCore
import Foundation
import GRDB
import Logging

/// The outbox: local writes waiting for the server's acknowledgement, oldest first.
extension LocalStore {
    /// What one acknowledged push did to the outbox.
    public struct Acknowledgement: Sendable, Hashable {
        /// Entries the server applied (or had applied before) and that left the outbox.
        public var acknowledged: Int
        /// Entries the server refused; they left the outbox for ``LocalStore/rejections()``.
        public var rejected: Int
        /// Entries refused only because this device lacked an encrypted space's current key: they went back to
        /// the end of the outbox, to be sealed and sent once the key is here.
        public var deferred = 0
    }

    /// Queues `mutation`; `clocksText` and `createdAt`, when given, are its clocks' text and the time's, already made.
    func appendToOutbox(_ db: Database, _ mutation: Mutation, clocksText: String? = nil, createdAt: String? = nil) throws {
        try db.cachedStatement(sql: """
            INSERT INTO ferry_outbox (space, collection, record_id, op, fields, clocks, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
            Self.text(mutation.space), mutation.collection, Self.text(mutation.id), mutation.op.rawValue,
            Self.fieldsText(mutation), clocksText ?? Self.clocksText(mutation), createdAt ?? Timestamp.format(now()),
        ])
    }

    /// Up to `limit` outbox entries with ids above `after` and at most `ceiling`, in id order, as mutations to push.
    package func pendingMutations(limit: Int = 500, after: Int64 = 0, through ceiling: Int64 = .max) throws -> [Mutation] {
        try pushableMutations(limit: limit, after: after, through: ceiling).map(Self.parsed)
    }

    /// The outbox entries a push sends next, like ``pendingMutations(limit:after:through:)``, with their fields and
    /// clocks kept as the JSON texts they are stored as (``Mutation/storedJSON``): the push writes them as they are, and
    /// parses them only to seal a record of an encrypted space.
    package func pushableMutations(limit: Int, after: Int64, through ceiling: Int64) throws -> [Mutation] {
        try read { db in try Self.pushableMutations(limit: limit, after: after, through: ceiling, in: db) }
    }

    static func pushableMutations(limit: Int, after: Int64, through ceiling: Int64, in db: Database) throws -> [Mutation] {
        do {
            // Read from the statement's rows as they come, not copied into rows first (a push reads 1000 a batch).
            let rows = try Row.fetchCursor(
                db, sql: "SELECT \(Self.mutationColumns) FROM ferry_outbox WHERE mutation_id > ? AND mutation_id <= ? ORDER BY mutation_id LIMIT ?",
                arguments: [after, ceiling, limit]
            )
            var mutations: [Mutation] = []
            mutations.reserveCapacity(min(max(limit, 0), 1024))
            while let row = try rows.next() { mutations.append(try Self.storedMutation(from: row)) }
            return mutations
        }
    }

    /// Whether `text` is braces around something: what a damaged entry most likely is not. Parsing it whole is what
    /// ``pushableMutations(limit:after:through:)`` saves; the server refuses a push that is not JSON as a whole.
    private static func isObjectText(_ text: String) -> Bool {
        text.utf8.first == UInt8(ascii: "{") && text.utf8.last == UInt8(ascii: "}")
    }

    /// A mutation's fields as the outbox keeps them: the text it was read with, when it was read from there.
    static func fieldsText(_ mutation: Mutation) -> String {
        mutation.storedJSON?.fields ?? jsonText(mutation.fields)
    }

    /// A mutation's clocks as the outbox keeps them.
    static func clocksText(_ mutation: Mutation) -> String {
        mutation.storedJSON?.clocks ?? ClockMap.text(mutation.clocks)
    }

    /// How many local writes wait for the server: a scan of the whole outbox (``hasPendingMutations()`` is one lookup).
    public func pendingCount() throws -> Int {
        try read(Self.pendingCount)
    }

    static func pendingCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ferry_outbox") ?? 0
    }

    /// Whether any local write waits for the server.
    public func hasPendingMutations() throws -> Bool {
        try read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_outbox)") ?? false }
    }

    /// The pull cursors to send with a push of `batch` (``PushRequest/cursors``): this store's cursor of each space
    /// the batch writes to, 0 for a space it has not pulled.
    package func cursors(for batch: [Mutation]) throws -> [UUID: Int64] {
        let held = try cursors()
        return Dictionary(batch.map { ($0.space, held[$0.space] ?? 0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Applies the server's answer to a push of `batch`, in one transaction: applied and duplicate entries
    /// leave the outbox, rejected ones move to ``rejections()``, and entries without a result stay. An entry refused
    /// only for want of an encrypted space's key goes back to the end of the outbox instead (``Acknowledgement/deferred``).
    ///
    /// The reply's ``PushResponse/cursors`` move this store's cursors past the push, each only from the value
    /// `sentCursors` says the push was sent with (a cursor that moved since is left alone).
    @discardableResult
    package func acknowledge(_ response: PushResponse, for batch: [Mutation], sentCursors: [UUID: Int64] = [:]) throws -> Acknowledgement {
        try write { db in try acknowledge(response, for: batch, sentCursors: sentCursors, in: db) }
    }

    /// ``acknowledge(_:for:sentCursors:)`` inside a write transaction: the sync engine runs it through ``write(_:)-swift.method``.
    package func acknowledge(_ response: PushResponse, for batch: [Mutation], sentCursors: [UUID: Int64], in db: Database) throws -> Acknowledgement {
        // Positions, not copies: a copy of a mutation retains each of its texts.
        let indexByID = Dictionary(batch.indices.map { (batch[$0].mutationId, $0) }, uniquingKeysWith: { first, _ in first })
        do {
            try pinClock(db)
            var acknowledgement = Acknowledgement(acknowledged: 0, rejected: 0)
            for (space, seq) in response.cursors {
                guard let sent = sentCursors[space], seq > sent else { continue }
                let held = try Int64.fetchOne(db, sql: "SELECT seq FROM ferry_cursors WHERE space = ?", arguments: [Self.text(space)]) ?? 0
                if held == sent { try setCursor(db, space: space, seq: seq) }
            }
            var removed = try removeFromOutbox(db, response.results.map(\.mutationId).filter { indexByID[$0] != nil })
            for result in response.results {
                // Each entry once: one the outbox no longer held (or a result named twice) changes nothing.
                guard let index = indexByID[result.mutationId], removed.remove(result.mutationId) != nil else { continue }
                switch result.status {
                case .applied, .duplicate:
                    acknowledgement.acknowledged += 1
                    if let stored = result.clocks, !stored.isEmpty {
                        try adoptServerClocks(db, stored, for: batch[index])
                    }
                case .rejected where try waitsForKey(db, result.code, space: batch[index].space):
                    acknowledgement.deferred += 1
                    try deferUntilKeyed(db, batch[index], code: result.code)
                case .rejected:
                    let mutation = batch[index]
                    acknowledgement.rejected += 1
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO ferry_rejections
                              (mutation_id, space, collection, record_id, op, fields, clocks, code, message, rejected_at)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            mutation.mutationId, Self.text(mutation.space), mutation.collection, Self.text(mutation.id),
                            mutation.op.rawValue, Self.fieldsText(mutation), Self.clocksText(mutation),
                            result.code ?? "rejected", result.message ?? "The server refused this change.", Timestamp.format(now()),
                        ]
                    )
                    logger.notice("the server rejected a local change", metadata: [
                        "ferry.mutation.id": "\(mutation.mutationId)", "ferry.collection": "\(mutation.collection)",
                        "ferry.error.code": "\(result.code ?? "rejected")",
                    ])
                }
            }
            return acknowledgement
        }
    }

    /// Deletes the outbox entries with these ids in one statement (one per entry was a third of an acknowledgement's
    /// time), and returns the ids it found.
    private func removeFromOutbox(_ db: Database, _ ids: [Int64]) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        return try Int64.fetchSet(
            db.cachedStatement(sql: "DELETE FROM ferry_outbox WHERE mutation_id IN (SELECT value FROM json_each(?)) RETURNING mutation_id"),
            arguments: [list]
        )
    }

    /// Whether a refusal is of a change that is fine but was not sealed as the server needs, so it is kept rather
    /// than shown as rejected: sent in clear to a space this device did not know was encrypted
    /// (`encryption_required`), to a space with no key yet (`space_key_missing`), or sealed with a key version the
    /// server does not have (`key_version_conflict`); the next pull tells the device the space's version. A clear
    /// value refused in a space the device knew was encrypted is a real rejection: sent again, it would be refused
    /// again, forever.
    private func waitsForKey(_ db: Database, _ code: String?, space: UUID) throws -> Bool {
        switch code {
        case ErrorCode.spaceKeyMissing.rawValue?, ErrorCode.keyVersionConflict.rawValue?:
            return true
        case ErrorCode.encryptionRequired.rawValue?:
            let known = try Int.fetchOne(db, sql: "SELECT key_version FROM ferry_space_keys WHERE space = ?", arguments: [Self.text(space)])
            return (known ?? 0) == 0
        default:
            return false
        }
    }

    /// Puts a change refused for want of a key back at the end of the outbox (a new id: the server has seen its
    /// old one), and marks a space this device did not know was encrypted as such until a pull names its version.
    private func deferUntilKeyed(_ db: Database, _ mutation: Mutation, code: String?) throws {
        try appendToOutbox(db, mutation)
        if code != ErrorCode.keyVersionConflict.rawValue {
            try db.execute(sql: "INSERT OR IGNORE INTO ferry_space_keys (space, key_version) VALUES (?, 0)", arguments: [Self.text(mutation.space)])
        }
        logger.notice("a local change waits for an encrypted space's key", metadata: [
            "ferry.collection": "\(mutation.collection)", "ferry.error.code": "\(code ?? "rejected")",
        ])
    }

    /// Makes sure no outbox entry of a `locked` space sits below one this sync will send, and returns the highest
    /// mutation id this sync may send.
    ///
    /// The server keeps the last mutation id it processed per device and answers any lower id as a replay, so
    /// an entry passed over while a later one is sent would be dropped as a "duplicate" once its space unlocks.
    /// Entries of locked spaces below the highest sendable entry therefore move to the end of the outbox (new
    /// ids, same content, one transaction), and the sync sends nothing above the returned ceiling: entries
    /// written while it runs go in the next one.
    func parkLockedEntries(_ locked: Set<UUID>) async throws -> Int64 {
        guard !locked.isEmpty else {
            // The common case, on every sync: a read, not a write transaction.
            return try await read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(mutation_id), 0) FROM ferry_outbox") ?? 0 }
        }
        let spaces = locked.map(Self.text)
        let list = Array(repeating: "?", count: spaces.count).joined(separator: ", ")
        return try await write { [self] db in
            let ceiling = try Int64.fetchOne(
                db, sql: "SELECT COALESCE(MAX(mutation_id), 0) FROM ferry_outbox WHERE space NOT IN (\(list))",
                arguments: StatementArguments(spaces)
            ) ?? 0
            let parked = try Int64.fetchAll(
                db, sql: "SELECT mutation_id FROM ferry_outbox WHERE mutation_id < ? AND space IN (\(list)) ORDER BY mutation_id",
                arguments: [ceiling] + StatementArguments(spaces)
            )
            try self.moveToEnd(db, parked)
            if !parked.isEmpty {
                logger.info("moved changes of locked encrypted spaces behind the ones this sync sends", metadata: ["ferry.outbox.parked": "\(parked.count)"])
            }
            return ceiling
        }
    }

    /// Numbers every waiting write after `lastProcessed`, in their order, in one transaction; later writes follow.
    ///
    /// The server answers `mutation_id_stale` when this store reuses ids it processed for other writes: the store was
    /// reset (the device id kept) or restored from a backup. Renumbered writes that the server had in fact processed
    /// are merged again, which changes nothing: a merge with the same clocks is a no-op.
    /// - Returns: how many entries were renumbered.
    @discardableResult
    package func renumberOutbox(after lastProcessed: Int64) throws -> Int {
        try write { db in try renumberOutbox(after: lastProcessed, in: db) }
    }

    /// ``renumberOutbox(after:)`` inside a write transaction.
    package func renumberOutbox(after lastProcessed: Int64, in db: Database) throws -> Int {
        do {
            let lowest = try Int64.fetchOne(db, sql: "SELECT MIN(mutation_id) FROM ferry_outbox")
            try db.execute(
                sql: "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'ferry_outbox'", arguments: [lastProcessed]
            )
            if db.changesCount == 0 {
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('ferry_outbox', ?)", arguments: [lastProcessed])
            }
            guard let lowest, lowest <= lastProcessed else { return 0 }
            let ids = try Int64.fetchAll(db, sql: "SELECT mutation_id FROM ferry_outbox ORDER BY mutation_id")
            try moveToEnd(db, ids)
            logger.notice("numbered waiting changes after the server's last processed id", metadata: [
                "ferry.outbox.renumbered": "\(ids.count)", "ferry.mutation.last_processed": "\(lastProcessed)",
            ])
            return ids.count
        }
    }

    /// Moves the outbox entries `ids`, in that order, to the end of the outbox under new ids, content unchanged.
    private func moveToEnd(_ db: Database, _ ids: [Int64]) throws {
        if !ids.isEmpty { try pinClock(db) }
        for id in ids {
            try db.execute(sql: """
                INSERT INTO ferry_outbox (space, collection, record_id, op, fields, clocks, created_at)
                SELECT space, collection, record_id, op, fields, clocks, created_at FROM ferry_outbox WHERE mutation_id = ?
                """, arguments: [id])
            try db.execute(sql: "DELETE FROM ferry_outbox WHERE mutation_id = ?", arguments: [id])
        }
    }

    /// How many outbox entries belong to `spaces`.
    func pendingCount(in spaces: Set<UUID>) throws -> Int {
        guard !spaces.isEmpty else { return 0 }
        let list = Array(repeating: "?", count: spaces.count).joined(separator: ", ")
        return try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ferry_outbox WHERE space IN (\(list))", arguments: StatementArguments(spaces.map(Self.text))) ?? 0
        }
    }

    /// Replaces this device's clocks with the ones the server stored (it lowers a clock that ran too far ahead
    /// of its own), for the fields no later local write has clocked since, so both sides keep the same clocks.
    private func adoptServerClocks(_ db: Database, _ stored: [String: HLC], for mutation: Mutation) throws {
        guard let collection = schema.collection(named: mutation.collection),
              var record = try loadRecord(db, collection, id: mutation.id) else { return }
        var changed = false
        let sent = mutation.clocks
        for (field, clock) in stored where record.clocks[field] == sent[field] && record.clocks[field] != clock {
            record.clocks[field] = clock
            changed = true
        }
        if changed { try saveRecord(db, record, in: collection) }
    }

    /// Moves an outbox entry to the rejections without asking the server (a change it could never accept).
    func rejectLocally(_ mutation: Mutation, code: ErrorCode, message: String) throws {
        try acknowledge(
            PushResponse(results: [MutationResult(mutationId: mutation.mutationId, status: .rejected, code: code.rawValue, message: message)], lastMutationId: 0),
            for: [mutation]
        )
    }

    /// Local writes the server refused, oldest first. They are never retried; show them, then ``dismissRejections(_:)``.
    public func rejections() throws -> [StoreRejection] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.mutationColumns), code, message, rejected_at FROM ferry_rejections ORDER BY mutation_id").map { row in
                StoreRejection(
                    mutation: try Self.mutation(from: row), code: row["code"], message: row["message"],
                    rejectedAt: Timestamp.parse(row["rejected_at"]) ?? Date(timeIntervalSince1970: 0)
                )
            }
        }
    }

    /// Forgets the given rejections (all of them when `mutationIds` is `nil`).
    public func dismissRejections(_ mutationIds: [Int64]? = nil) throws {
        try write { db in
            if let mutationIds {
                for id in mutationIds {
                    try db.execute(sql: "DELETE FROM ferry_rejections WHERE mutation_id = ?", arguments: [id])
                }
            } else {
                try db.execute(sql: "DELETE FROM ferry_rejections")
            }
        }
    }

    /// `record` with its ``RecordSyncState``: pending when the outbox holds an entry, rejected when the latest
    /// refusal is newer than any pending entry.
    func withSyncState(_ db: Database, _ record: LocalRecord) throws -> LocalRecord {
        var record = record
        let arguments: StatementArguments = [record.collection, Self.text(record.id)]
        // Cached: every record a read returns asks both, and compiling them cost more than running them.
        let pending = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT MAX(mutation_id) FROM ferry_outbox WHERE collection = ? AND record_id = ?"), arguments: arguments
        )
        let rejection = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT mutation_id, code, message FROM ferry_rejections WHERE collection = ? AND record_id = ? ORDER BY mutation_id DESC LIMIT 1"),
            arguments: arguments
        )
        if let rejection, (rejection["mutation_id"] as Int64) > (pending ?? 0) {
            record.syncState = .rejected(code: rejection["code"], message: rejection["message"])
        } else {
            record.syncState = pending == nil ? .synced : .pending
        }
        return record
    }

    /// The columns ``mutation(from:)`` reads, in its order: an outbox or rejection row's mutation.
    static let mutationColumns = "mutation_id, space, collection, record_id, op, fields, clocks"

    /// A mutation from a row that starts with ``mutationColumns``, its fields and clocks parsed.
    static func mutation(from row: Row) throws -> Mutation {
        try parsed(storedMutation(from: row))
    }

    /// A mutation from a row that starts with ``mutationColumns``, its fields and clocks kept as the stored texts. Read
    /// by position: a lookup by name lowercases and compares column names, for every column of up to 1000 rows a push
    /// reads.
    static func storedMutation(from row: Row) throws -> Mutation {
        let (mutationID, spaceText, collection, idText, opText): (Int64, String, String, String, String) = (row[0], row[1], row[2], row[3], row[4])
        let stored = Mutation.StoredJSON(fields: row[5], clocks: row[6])
        guard let space = UUID(wireText: spaceText), let id = UUID(wireText: idText), let op = Mutation.Operation(rawValue: opText),
              isObjectText(stored.fields), isObjectText(stored.clocks) else {
            throw malformedEntry
        }
        return Mutation(mutationId: mutationID, space: space, collection: collection, id: id, op: op, storedJSON: stored)
    }

    /// `mutation` with its stored texts parsed into values.
    static func parsed(_ mutation: Mutation) throws -> Mutation {
        guard let parsed = mutation.parsed() else { throw malformedEntry }
        return parsed
    }

    static let malformedEntry = StoreError(code: .storeFailed, message: "An outbox entry is malformed.")
}
