import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    public func identity(provider: String, subject: String) async throws -> (identity: IdentityRecord, user: UserRecord)? {
        try await pool.read { db in
            guard let identity = try Row.fetchOne(
                db, sql: "SELECT * FROM ferry_identities WHERE provider = ? AND subject = ?", arguments: [provider, subject]
            ).map(IdentityRecord.init(row:)), let user = try Self.user(db, id: identity.userID) else { return nil }
            return (identity, user)
        }
    }

    public func link(_ identity: IdentityRecord) async throws {
        try await pool.write { db in
            try Self.insert(identity, db)
            guard let user = try Self.user(db, id: identity.userID), !user.providers.contains(identity.provider) else { return }
            try db.execute(
                sql: "UPDATE ferry_users SET providers = ?, updated_at = ? WHERE id = ?",
                arguments: [(user.providers + [identity.provider]).joined(separator: ","), identity.updatedAt, user.id.databaseText]
            )
        }
    }

    public func updateIdentity(provider: String, subject: String, email: String?, data: String, now: Date) async throws -> IdentityRecord? {
        try await pool.write { db in
            try Row.fetchOne(
                db, sql: "UPDATE ferry_identities SET email = ?, data = ?, updated_at = ? WHERE provider = ? AND subject = ? RETURNING *",
                arguments: [email, data, now, provider, subject]
            ).map(IdentityRecord.init(row:))
        }
    }

    public func deleteSessions(userID: UUID, startedBefore date: Date) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM ferry_sessions WHERE user_id = ? AND created_at < ?", arguments: [userID.databaseText, date]
            )
        }
    }

    static func insert(_ identity: IdentityRecord, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO ferry_identities (provider, subject, user_id, email, data, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                identity.provider, identity.subject, identity.userID.databaseText, identity.email, identity.data,
                identity.createdAt, identity.updatedAt,
            ]
        )
    }
}

extension IdentityRecord {
    init(row: Row) {
        self.init(
            provider: row["provider"], subject: row["subject"], userID: UUID(wireText: row["user_id"])!, email: row["email"],
            data: row["data"], createdAt: row["created_at"], updatedAt: row["updated_at"]
        )
    }
}
