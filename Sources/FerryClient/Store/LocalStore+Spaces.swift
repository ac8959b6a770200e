import FerryCore
import Foundation
import GRDB

/// Spaces created while offline: queued here, created on the server by the next sync before its push.
extension LocalStore {
    /// Queues the creation of a shared space and returns its id, so records can go into it at once.
    ///
    /// The next sync creates it on the server (`POST /sync/v1/spaces` with this id) before pushing the outbox,
    /// so the records written into it meanwhile arrive after their space exists.
    @discardableResult
    public func queueSpace(_ request: CreateSpaceRequest) throws -> UUID {
        let id = request.id ?? UUID()
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO ferry_pending_spaces (id, name, encrypted, created_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.text(id), request.name, (request.encrypted ?? false) ? 1 : 0, Timestamp.format(now())]
            )
            if request.encrypted == true {
                // Locked until the first sync makes its key: nothing written into it leaves the device in clear.
                try db.execute(sql: "INSERT OR IGNORE INTO ferry_space_keys (space, key_version) VALUES (?, 0)", arguments: [Self.text(id)])
            }
        }
        return id
    }

    /// Spaces queued by ``queueSpace(_:)`` and not created on the server yet, oldest first.
    package func pendingSpaces() throws -> [CreateSpaceRequest] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM ferry_pending_spaces ORDER BY created_at, id").compactMap { row in
                guard let id = UUID(uuidString: row["id"] as String) else { return nil }
                return CreateSpaceRequest(id: id, name: row["name"], encrypted: (row["encrypted"] as Int64) != 0)
            }
        }
    }

    /// Forgets a queued space the server refused for good (`code`, `message`): the records written into it become
    /// rejections (``rejections()``), as the server would refuse each, and an encrypted one's empty key row goes, so
    /// nothing waits for a key that will never come. Returns how many changes were refused.
    @discardableResult
    func spaceRefused(_ id: UUID, code: String, message: String) throws -> Int {
        try write { db in
            let space = Self.text(id)
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO ferry_rejections (mutation_id, space, collection, record_id, op, fields, clocks, code, message, rejected_at)
                    SELECT mutation_id, space, collection, record_id, op, fields, clocks, ?, ?, ? FROM ferry_outbox WHERE space = ?
                    """,
                arguments: [code, "The space was not created: \(message)", Timestamp.format(now()), space]
            )
            try db.execute(sql: "DELETE FROM ferry_outbox WHERE space = ?", arguments: [space])
            let refused = db.changesCount
            try db.execute(sql: "DELETE FROM ferry_space_keys WHERE space = ? AND key_version = 0", arguments: [space])
            try db.execute(sql: "DELETE FROM ferry_pending_spaces WHERE id = ?", arguments: [space])
            return refused
        }
    }

    /// Forgets a queued space once the server has it.
    func spaceCreated(_ id: UUID) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM ferry_pending_spaces WHERE id = ?", arguments: [Self.text(id)])
        }
    }
}
