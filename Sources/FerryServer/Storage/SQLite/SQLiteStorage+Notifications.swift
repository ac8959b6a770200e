import FerryCore
import Foundation
import GRDB

extension SQLiteStorage: NotificationStorage {
    func queueNotifications(space: UUID, seq: Int64, origin: UUID?, dueAt: Date, now: Date) async throws {
        try await pool.write { db in
            // `pending` and `due_at` on the right-hand side are the waiting row's: a waiting notification keeps its time.
            try db.execute(
                sql: """
                    INSERT INTO ferry_notification_queue (device_id, space_id, seq, pending, version, due_at, attempts)
                    SELECT d.id, ?, ?, 1, 1, ?, 0 FROM ferry_devices d JOIN ferry_members m ON m.user_id = d.user_id
                    WHERE m.space_id = ? AND d.push_token IS NOT NULL AND d.trust <> 'revoked' AND d.id IS NOT ?
                      AND (d.streaming_until IS NULL OR d.streaming_until <= ?)
                    ON CONFLICT (device_id) DO UPDATE SET space_id = excluded.space_id, seq = excluded.seq, version = version + 1,
                      due_at = CASE WHEN pending = 1 THEN due_at ELSE max(excluded.due_at, coalesce(next_allowed_at, excluded.due_at)) END,
                      pending = 1
                    """,
                arguments: [space.databaseText, seq, dueAt, space.databaseText, origin?.databaseText, now]
            )
        }
    }

    func claimNotifications(now: Date, leaseUntil: Date, limit: Int) async throws -> [QueuedNotification] {
        try await pool.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT q.device_id, q.space_id, q.seq, q.version, q.attempts,
                      CASE WHEN d.trust = 'revoked' THEN NULL ELSE d.push_token END AS push_token, d.push_environment
                    FROM ferry_notification_queue q JOIN ferry_devices d ON d.id = q.device_id
                    WHERE q.pending = 1 AND q.due_at <= ? AND (q.lease_until IS NULL OR q.lease_until <= ?)
                    ORDER BY q.due_at LIMIT ?
                    """,
                arguments: [now, now, limit]
            )
            let claimed = rows.map { row in
                QueuedNotification(
                    deviceID: UUID(wireText: row["device_id"])!, deviceToken: row["push_token"],
                    environment: (row["push_environment"] as String?).flatMap(PushEnvironment.init(rawValue:)) ?? .production,
                    space: UUID(wireText: row["space_id"])!, seq: row["seq"], version: row["version"], attempts: row["attempts"]
                )
            }
            for notification in claimed {
                try db.execute(
                    sql: "UPDATE ferry_notification_queue SET lease_until = ? WHERE device_id = ?",
                    arguments: [leaseUntil, notification.deviceID.databaseText]
                )
            }
            return claimed
        }
    }

    func finishNotifications(_ outcomes: [(QueuedNotification, NotificationOutcome)]) async throws {
        guard !outcomes.isEmpty else { return }
        try await pool.write { db in
            for (notification, outcome) in outcomes { try Self.finish(db, notification, outcome) }
        }
    }

    private static func finish(_ db: Database, _ notification: QueuedNotification, _ outcome: NotificationOutcome) throws {
        let device = notification.deviceID.databaseText
        switch outcome {
        case .sent(let nextAllowed):
            // A commit queued while this one was being sent stays waiting, due once the device may be woken again.
            try db.execute(
                sql: """
                    UPDATE ferry_notification_queue SET lease_until = NULL, attempts = 0, next_allowed_at = ?,
                      due_at = CASE WHEN version = ? THEN due_at ELSE ? END, pending = (version <> ?)
                    WHERE device_id = ?
                    """,
                arguments: [nextAllowed, notification.version, nextAllowed, notification.version, device]
            )
        case .retry(let date):
            try db.execute(
                sql: "UPDATE ferry_notification_queue SET lease_until = NULL, attempts = attempts + 1, due_at = ? WHERE device_id = ?",
                arguments: [date, device]
            )
        case .dropped:
            try db.execute(
                sql: "UPDATE ferry_notification_queue SET lease_until = NULL, attempts = 0, pending = (version <> ?) WHERE device_id = ?",
                arguments: [notification.version, device]
            )
        case .tokenRejected:
            try clearPushToken(db, deviceID: notification.deviceID, token: notification.deviceToken)
        }
    }

    func alertTargets(userID: UUID, space: UUID?, excluding: UUID?, limit: Int) async throws -> [AlertTarget] {
        try await pool.read { db in
            let owners = space == nil
                ? "d.user_id = ?"
                : "d.user_id IN (SELECT user_id FROM ferry_members WHERE space_id = ?)"
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT d.id, d.push_token, d.push_environment FROM ferry_devices d
                    WHERE \(owners) AND d.push_token IS NOT NULL AND d.trust <> 'revoked' AND d.id IS NOT ?
                    ORDER BY d.id LIMIT ?
                    """,
                arguments: [space?.databaseText ?? userID.databaseText, excluding?.databaseText, limit]
            ).map { row in
                AlertTarget(
                    deviceID: UUID(wireText: row["id"])!, deviceToken: row["push_token"],
                    environment: (row["push_environment"] as String?).flatMap(PushEnvironment.init(rawValue:)) ?? .production
                )
            }
        }
    }

    func clearPushToken(deviceID: UUID, token: String?) async throws {
        try await pool.write { db in try Self.clearPushToken(db, deviceID: deviceID, token: token) }
    }

    private static func clearPushToken(_ db: Database, deviceID: UUID, token: String?) throws {
        try db.execute(
            sql: "UPDATE ferry_devices SET push_token = NULL, push_environment = NULL WHERE id = ? AND push_token IS ?",
            arguments: [deviceID.databaseText, token]
        )
        try db.execute(sql: "DELETE FROM ferry_notification_queue WHERE device_id = ?", arguments: [deviceID.databaseText])
    }

    func markStreaming(deviceIDs: [UUID], until: Date?) async throws {
        guard !deviceIDs.isEmpty else { return }
        try await pool.write { db in
            // SQLite binds at most 32,766 parameters a statement.
            for start in stride(from: 0, to: deviceIDs.count, by: 1000) {
                let chunk = deviceIDs[start..<min(start + 1000, deviceIDs.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                try db.execute(
                    sql: "UPDATE ferry_devices SET streaming_until = ? WHERE id IN (\(marks))",
                    arguments: StatementArguments([until]) + StatementArguments(chunk.map(\.databaseText))
                )
            }
        }
    }
}
