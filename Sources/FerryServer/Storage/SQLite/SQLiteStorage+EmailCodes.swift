import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    public func saveCode(_ code: EmailCodeRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO ferry_email_codes (user_id, purpose, email, code_hash, link_hash, created_at, expires_at, attempts)
                    VALUES (?, ?, ?, ?, ?, ?, ?, 0)
                    """,
                arguments: [code.userID.databaseText, code.purpose, code.email, code.codeHash, code.linkHash, code.createdAt, code.expiresAt]
            )
        }
    }

    public func code(userID: UUID, purpose: String) async throws -> EmailCodeRecord? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM ferry_email_codes WHERE user_id = ? AND purpose = ?", arguments: [userID.databaseText, purpose]
            ).map(EmailCodeRecord.init(row:))
        }
    }

    public func redeemCode(email: String, purposes: [String], codeHash: String, now: Date, maximumAttempts: Int) async throws -> EmailCodeRecord? {
        let purposeList = Array(repeating: "?", count: purposes.count).joined(separator: ", ")
        return try await pool.write { db in
            // Every try counts first, the right one too: tries at once cannot outrun the limit.
            try db.execute(
                sql: "UPDATE ferry_email_codes SET attempts = attempts + 1 WHERE email = ? AND purpose IN (\(purposeList))",
                arguments: StatementArguments([email] + purposes)
            )
            return try Row.fetchOne(
                db,
                sql: """
                    DELETE FROM ferry_email_codes
                    WHERE email = ? AND purpose IN (\(purposeList)) AND code_hash = ? AND expires_at > ? AND attempts <= ?
                    RETURNING *
                    """,
                arguments: StatementArguments([email] + purposes + [codeHash]) + [now, maximumAttempts]
            ).map(EmailCodeRecord.init(row:))
        }
    }

    public func redeemLink(linkHash: String, purposes: [String], now: Date) async throws -> EmailCodeRecord? {
        let purposeList = Array(repeating: "?", count: purposes.count).joined(separator: ", ")
        return try await pool.write { db in
            try Row.fetchOne(
                db, sql: "DELETE FROM ferry_email_codes WHERE link_hash = ? AND purpose IN (\(purposeList)) AND expires_at > ? RETURNING *",
                arguments: StatementArguments([linkHash] + purposes) + [now]
            ).map(EmailCodeRecord.init(row:))
        }
    }

    public func proveEmail(userID: UUID, now: Date, replacingPasswordHash: String?) async throws -> UserRecord? {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE ferry_users SET email_confirmed_at = coalesce(email_confirmed_at, ?), email_proven = 1,
                      password_hash = coalesce(?, password_hash)
                    WHERE id = ?
                    """,
                arguments: [now, replacingPasswordHash, userID.databaseText]
            )
            if replacingPasswordHash != nil {
                try db.execute(sql: "DELETE FROM ferry_sessions WHERE user_id = ?", arguments: [userID.databaseText])
            }
            return try Self.user(db, id: userID)
        }
    }

    public func changeEmail(userID: UUID, to email: String, now: Date) async throws -> UserRecord? {
        do {
            return try await pool.write { db in
                try db.execute(
                    sql: "UPDATE ferry_users SET email = ?, email_confirmed_at = ?, email_proven = 1, updated_at = ? WHERE id = ?",
                    arguments: [email, now, now, userID.databaseText]
                )
                try db.execute(
                    sql: "DELETE FROM ferry_email_codes WHERE user_id = ? AND purpose <> 'email_change'", arguments: [userID.databaseText]
                )
                // The personal space is named after the address.
                try db.execute(
                    sql: "UPDATE ferry_spaces SET name = ? WHERE id = ? AND is_personal = 1", arguments: [email, userID.databaseText]
                )
                return try Self.user(db, id: userID)
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw AuthStorageError.emailTaken
        }
    }
}

extension EmailCodeRecord {
    init(row: Row) {
        self.init(
            userID: UUID(wireText: row["user_id"])!, purpose: row["purpose"], email: row["email"], codeHash: row["code_hash"],
            linkHash: row["link_hash"], createdAt: row["created_at"], expiresAt: row["expires_at"]
        )
        attempts = row["attempts"]
    }
}
