import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    public func createOperator(_ record: OperatorRecord) async throws {
        do {
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO ferry_operators (id, email, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [record.id.databaseText, record.email, record.passwordHash, record.createdAt, record.updatedAt]
                )
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw AuthStorageError.emailTaken
        }
    }

    public func operators() async throws -> [OperatorRecord] {
        try await pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM ferry_operators ORDER BY email").map(OperatorRecord.init(row:)) }
    }

    public func operatorRecord(email: String) async throws -> OperatorRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM ferry_operators WHERE email = ?", arguments: [email]).map(OperatorRecord.init(row:))
        }
    }

    public func removeOperator(email: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM ferry_operators WHERE email = ?", arguments: [email])
            return db.changesCount > 0
        }
    }

    public func setOperatorPassword(email: String, passwordHash: String, now: Date) async throws -> Bool {
        try await pool.write { db in
            guard let id = try String.fetchOne(
                db, sql: "UPDATE ferry_operators SET password_hash = ?, updated_at = ? WHERE email = ? RETURNING id",
                arguments: [passwordHash, now, email]
            ) else { return false }
            try db.execute(sql: "DELETE FROM ferry_operator_sessions WHERE operator_id = ?", arguments: [id])
            return true
        }
    }

    public func createOperatorSession(tokenHash: String, operatorID: UUID, now: Date, expiredBefore cutoffs: OperatorSessionCutoffs) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM ferry_operator_sessions WHERE last_used_at <= ? OR created_at <= ?", arguments: [cutoffs.idle, cutoffs.absolute]
            )
            try db.execute(
                sql: "INSERT INTO ferry_operator_sessions (token_hash, operator_id, created_at, last_used_at) VALUES (?, ?, ?, ?)",
                arguments: [tokenHash, operatorID.databaseText, now, now]
            )
            try db.execute(sql: "UPDATE ferry_operators SET last_sign_in_at = ? WHERE id = ?", arguments: [now, operatorID.databaseText])
        }
    }

    public func operatorSession(tokenHash: String, now: Date, cutoffs: OperatorSessionCutoffs) async throws -> (OperatorRecord, Date)? {
        let found = try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT o.*, s.created_at AS session_created_at, s.last_used_at AS session_used_at
                    FROM ferry_operator_sessions s JOIN ferry_operators o ON o.id = s.operator_id
                    WHERE s.token_hash = ? AND s.last_used_at > ? AND s.created_at > ?
                    """,
                arguments: [tokenHash, cutoffs.idle, cutoffs.absolute]
            ).map { row -> (OperatorRecord, Date, Date) in (OperatorRecord(row: row), row["session_created_at"], row["session_used_at"]) }
        }
        guard let (record, createdAt, usedAt) = found else { return nil }
        // A write at most once a minute per session, not one per request.
        if now.timeIntervalSince(usedAt) > 60 {
            try await pool.write { db in
                try db.execute(sql: "UPDATE ferry_operator_sessions SET last_used_at = ? WHERE token_hash = ?", arguments: [now, tokenHash])
            }
        }
        return (record, createdAt)
    }

    public func deleteOperatorSession(tokenHash: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM ferry_operator_sessions WHERE token_hash = ?", arguments: [tokenHash]) }
    }

    public func logOperatorAction(_ action: OperatorAction) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO ferry_operator_log (at, operator, action, target) VALUES (?, ?, ?, ?)",
                arguments: [action.at, action.operatorEmail, action.action, action.target]
            )
        }
    }

    public func operatorActions(offset: Int, limit: Int) async throws -> (actions: [OperatorAction], total: Int) {
        try await pool.read { db in
            let actions = try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_operator_log ORDER BY id DESC LIMIT ? OFFSET ?", arguments: [limit, offset]
            ).map { row in OperatorAction(at: row["at"], operatorEmail: row["operator"], action: row["action"], target: row["target"]) }
            return (actions, try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_operator_log") ?? 0)
        }
    }
}

extension OperatorRecord {
    init(row: Row) {
        self.init(
            id: UUID(wireText: row["id"]) ?? UUID(), email: row["email"], passwordHash: row["password_hash"], createdAt: row["created_at"],
            updatedAt: row["updated_at"], lastSignInAt: row["last_sign_in_at"]
        )
    }
}
