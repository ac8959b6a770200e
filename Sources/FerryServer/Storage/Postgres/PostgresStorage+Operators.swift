import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage {
    private static let operatorColumns = "id, email, password_hash, created_at, updated_at, last_sign_in_at"

    public func createOperator(_ record: OperatorRecord) async throws {
        do {
            try await client.query(
                """
                INSERT INTO ferry_operators (id, email, password_hash, created_at, updated_at)
                VALUES (\(record.id), \(record.email), \(record.passwordHash), \(record.createdAt), \(record.updatedAt))
                """,
                logger: logger
            )
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw AuthStorageError.emailTaken
        }
    }

    public func operators() async throws -> [OperatorRecord] {
        try await Self.operators(try await client.query("SELECT \(unescaped: Self.operatorColumns) FROM ferry_operators ORDER BY email", logger: logger))
    }

    public func operatorRecord(email: String) async throws -> OperatorRecord? {
        try await Self.operators(try await client.query(
            "SELECT \(unescaped: Self.operatorColumns) FROM ferry_operators WHERE email = \(email)", logger: logger
        )).first
    }

    public func removeOperator(email: String) async throws -> Bool {
        let rows = try await client.query("DELETE FROM ferry_operators WHERE email = \(email) RETURNING id", logger: logger)
        return try await rows.decode(UUID.self).first(where: { _ in true }) != nil
    }

    public func setOperatorPassword(email: String, passwordHash: String, now: Date) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "UPDATE ferry_operators SET password_hash = \(passwordHash), updated_at = \(now) WHERE email = \(email) RETURNING id", logger: logger
            )
            guard let id = try await rows.decode(UUID.self).first(where: { _ in true }) else { return false }
            try await connection.query("DELETE FROM ferry_operator_sessions WHERE operator_id = \(id)", logger: logger)
            return true
        }
    }

    public func createOperatorSession(tokenHash: String, operatorID: UUID, now: Date, expiredBefore cutoffs: OperatorSessionCutoffs) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "DELETE FROM ferry_operator_sessions WHERE last_used_at <= \(cutoffs.idle) OR created_at <= \(cutoffs.absolute)", logger: logger
            )
            try await connection.query(
                """
                INSERT INTO ferry_operator_sessions (token_hash, operator_id, created_at, last_used_at)
                VALUES (\(tokenHash), \(operatorID), \(now), \(now))
                """,
                logger: logger
            )
            try await connection.query("UPDATE ferry_operators SET last_sign_in_at = \(now) WHERE id = \(operatorID)", logger: logger)
        }
    }

    public func operatorSession(tokenHash: String, now: Date, cutoffs: OperatorSessionCutoffs) async throws -> (OperatorRecord, Date)? {
        let rows = try await client.query(
            """
            SELECT o.id, o.email, o.password_hash, o.created_at, o.updated_at, o.last_sign_in_at, s.created_at, s.last_used_at
            FROM ferry_operator_sessions s JOIN ferry_operators o ON o.id = s.operator_id
            WHERE s.token_hash = \(tokenHash) AND s.last_used_at > \(cutoffs.idle) AND s.created_at > \(cutoffs.absolute)
            """,
            logger: logger
        )
        var found: (OperatorRecord, Date, Date)?
        for try await (id, email, hash, createdAt, updatedAt, signedIn, sessionCreated, used) in rows.decode(
            (UUID, String, String, Date, Date, Date?, Date, Date).self
        ) {
            found = (OperatorRecord(id: id, email: email, passwordHash: hash, createdAt: createdAt, updatedAt: updatedAt, lastSignInAt: signedIn), sessionCreated, used)
        }
        guard let (record, sessionCreated, used) = found else { return nil }
        // A write at most once a minute per session, not one per request.
        if now.timeIntervalSince(used) > 60 {
            try await client.query("UPDATE ferry_operator_sessions SET last_used_at = \(now) WHERE token_hash = \(tokenHash)", logger: logger)
        }
        return (record, sessionCreated)
    }

    public func deleteOperatorSession(tokenHash: String) async throws {
        try await client.query("DELETE FROM ferry_operator_sessions WHERE token_hash = \(tokenHash)", logger: logger)
    }

    public func logOperatorAction(_ action: OperatorAction) async throws {
        try await client.query(
            """
            INSERT INTO ferry_operator_log (at, operator, action, target)
            VALUES (\(action.at), \(action.operatorEmail), \(action.action), \(action.target))
            """,
            logger: logger
        )
    }

    public func operatorActions(offset: Int, limit: Int) async throws -> (actions: [OperatorAction], total: Int) {
        let rows = try await client.query(
            "SELECT at, operator, action, target, count(*) OVER () FROM ferry_operator_log ORDER BY id DESC LIMIT \(limit) OFFSET \(offset)",
            logger: logger
        )
        var actions: [OperatorAction] = []
        var total = 0
        for try await (at, email, action, target, count) in rows.decode((Date, String, String, String, Int).self) {
            actions.append(OperatorAction(at: at, operatorEmail: email, action: action, target: target))
            total = count
        }
        if actions.isEmpty, offset > 0 {
            total = try await client.query("SELECT count(*) FROM ferry_operator_log", logger: logger).decode(Int.self).first(where: { _ in true }) ?? 0
        }
        return (actions, total)
    }

    private static func operators(_ rows: PostgresRowSequence) async throws -> [OperatorRecord] {
        var records: [OperatorRecord] = []
        for try await (id, email, hash, createdAt, updatedAt, signedIn) in rows.decode((UUID, String, String, Date, Date, Date?).self) {
            records.append(OperatorRecord(id: id, email: email, passwordHash: hash, createdAt: createdAt, updatedAt: updatedAt, lastSignInAt: signedIn))
        }
        return records
    }
}
