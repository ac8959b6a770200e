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
    }

    func appendToOutbox(_ db: Database, _ mutation: Mutation) throws {
        try db.execute(
            sql: """
                INSERT INTO ferry_outbox (space, collection, record_id, op, fields, clocks, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                Self.text(mutation.space), mutation.collection, Self.text(mutation.id), mutation.op.rawValue,
                Self.jsonText(mutation.fields), Self.jsonText(mutation.clocks), Timestamp.format(now()),
            ]
        )
    }

    /// Up to `limit` outbox entries with ids above `after`, in id order, as mutations to push.
    public func pendingMutations(limit: Int = 500, after: Int64 = 0) throws -> [Mutation] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_outbox WHERE mutation_id > ? ORDER BY mutation_id LIMIT ?",
                arguments: [after, limit]
            ).map(Self.mutation(from:))
        }
    }

    /// How many local writes wait for the server.
    public func pendingCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ferry_outbox") ?? 0 }
    }

    /// Applies the server's answer to a push of `batch`, in one transaction: applied and duplicate entries
    /// leave the outbox, rejected ones move to ``rejections()``, and entries without a result stay.
    @discardableResult
    public func acknowledge(_ response: PushResponse, for batch: [Mutation]) throws -> Acknowledgement {
        let byID = Dictionary(batch.map { ($0.mutationId, $0) }, uniquingKeysWith: { first, _ in first })
        return try write { db in
            var acknowledgement = Acknowledgement(acknowledged: 0, rejected: 0)
            for result in response.results {
                guard let mutation = byID[result.mutationId] else { continue }
                try db.execute(sql: "DELETE FROM ferry_outbox WHERE mutation_id = ?", arguments: [result.mutationId])
                guard db.changesCount > 0 else { continue }
                switch result.status {
                case .applied, .duplicate:
                    acknowledgement.acknowledged += 1
                    if let stored = result.clocks, !stored.isEmpty {
                        try adoptServerClocks(db, stored, for: mutation)
                    }
                case .rejected:
                    acknowledgement.rejected += 1
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO ferry_rejections
                              (mutation_id, space, collection, record_id, op, fields, clocks, code, message, rejected_at)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            mutation.mutationId, Self.text(mutation.space), mutation.collection, Self.text(mutation.id),
                            mutation.op.rawValue, Self.jsonText(mutation.fields), Self.jsonText(mutation.clocks),
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

    /// Replaces this device's clocks with the ones the server stored (it lowers a clock that ran too far ahead
    /// of its own), for the fields no later local write has clocked since, so both sides keep the same clocks.
    private func adoptServerClocks(_ db: Database, _ stored: [String: HLC], for mutation: Mutation) throws {
        guard let collection = schema.collection(named: mutation.collection),
              var record = try loadRecord(db, collection, id: mutation.id) else { return }
        var changed = false
        for (field, clock) in stored where record.clocks[field] == mutation.clocks[field] && record.clocks[field] != clock {
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
            try Row.fetchAll(db, sql: "SELECT * FROM ferry_rejections ORDER BY mutation_id").map { row in
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
        let pending = try Int64.fetchOne(db, sql: "SELECT MAX(mutation_id) FROM ferry_outbox WHERE collection = ? AND record_id = ?", arguments: arguments)
        let rejection = try Row.fetchOne(
            db, sql: "SELECT mutation_id, code, message FROM ferry_rejections WHERE collection = ? AND record_id = ? ORDER BY mutation_id DESC LIMIT 1",
            arguments: arguments
        )
        if let rejection, (rejection["mutation_id"] as Int64) > (pending ?? 0) {
            record.syncState = .rejected(code: rejection["code"], message: rejection["message"])
        } else {
            record.syncState = pending == nil ? .synced : .pending
        }
        return record
    }

    static func mutation(from row: Row) throws -> Mutation {
        let decoder = JSONDecoder()
        let spaceText: String = row["space"], idText: String = row["record_id"], opText: String = row["op"]
        let fieldsText: String = row["fields"], clocksText: String = row["clocks"]
        guard let space = UUID(uuidString: spaceText), let id = UUID(uuidString: idText),
              let op = Mutation.Operation(rawValue: opText) else {
            throw StoreError(code: .storeFailed, message: "An outbox entry is malformed.")
        }
        return Mutation(
            mutationId: row["mutation_id"], space: space, collection: row["collection"], id: id, op: op,
            fields: try decoder.decode([String: JSONValue].self, from: Data(fieldsText.utf8)),
            clocks: try decoder.decode([String: HLC].self, from: Data(clocksText.utf8))
        )
    }
}
