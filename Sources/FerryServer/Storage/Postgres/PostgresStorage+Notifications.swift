import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: NotificationStorage {
    func queueNotifications(space: UUID, seq: Int64, origin: UUID?, dueAt: Date, now: Date) async throws {
        // Rows in device order, so that two instances queueing at once lock them in the same order (no deadlock).
        try await client.query(
            """
            INSERT INTO ferry_notification_queue (device_id, space_id, seq, pending, version, due_at, attempts)
            SELECT d.id, \(space), \(seq), true, 1, \(dueAt), 0 FROM ferry_devices d JOIN ferry_members m ON m.user_id = d.user_id
            WHERE m.space_id = \(space) AND d.push_token IS NOT NULL AND d.trust <> 'revoked' AND d.id IS DISTINCT FROM \(origin)::uuid
              AND (d.streaming_until IS NULL OR d.streaming_until <= \(now))
            ORDER BY d.id
            ON CONFLICT (device_id) DO UPDATE SET space_id = excluded.space_id, seq = excluded.seq,
              version = ferry_notification_queue.version + 1,
              due_at = CASE WHEN ferry_notification_queue.pending THEN ferry_notification_queue.due_at
                ELSE GREATEST(excluded.due_at, ferry_notification_queue.next_allowed_at) END,
              pending = true
            """,
            logger: logger
        )
    }

    func claimNotifications(now: Date, leaseUntil: Date, limit: Int) async throws -> [QueuedNotification] {
        // SKIP LOCKED: instances claiming at once take different rows; the lease keeps them from claiming a row again
        // while its send runs.
        let rows = try await client.query(
            """
            WITH due AS (
              SELECT device_id FROM ferry_notification_queue
              WHERE pending AND due_at <= \(now) AND (lease_until IS NULL OR lease_until <= \(now))
              ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            )
            UPDATE ferry_notification_queue q SET lease_until = \(leaseUntil)
            FROM due JOIN ferry_devices d ON d.id = due.device_id
            WHERE q.device_id = due.device_id
            RETURNING q.device_id, q.space_id, q.seq, q.version, q.attempts,
                      CASE WHEN d.trust = 'revoked' THEN NULL ELSE d.push_token END AS push_token, d.push_environment
            """,
            logger: logger
        )
        var claimed: [QueuedNotification] = []
        for try await (device, space, seq, version, attempts, token, environment) in rows.decode(
            (UUID, UUID, Int64, Int, Int, String?, String?).self
        ) {
            claimed.append(QueuedNotification(
                deviceID: device, deviceToken: token, environment: environment.flatMap(PushEnvironment.init(rawValue:)) ?? .production,
                space: space, seq: seq, version: version, attempts: attempts
            ))
        }
        return claimed
    }

    func finishNotifications(_ outcomes: [(QueuedNotification, NotificationOutcome)]) async throws {
        guard !outcomes.isEmpty else { return }
        let logger = self.logger
        try await client.withTransaction(logger: logger) { connection in
            for (notification, outcome) in outcomes {
                try await connection.query(Self.finish(notification, outcome), logger: logger)
                if case .tokenRejected = outcome {
                    try await connection.query(
                        "DELETE FROM ferry_notification_queue WHERE device_id = \(notification.deviceID)", logger: logger
                    )
                }
            }
        }
    }

    /// The statement recording one outcome (a rejected token's also needs its queue row deleted).
    private static func finish(_ notification: QueuedNotification, _ outcome: NotificationOutcome) -> PostgresQuery {
        let device = notification.deviceID
        let version = notification.version
        switch outcome {
        case .sent(let nextAllowed):
            return """
                UPDATE ferry_notification_queue SET lease_until = NULL, attempts = 0, next_allowed_at = \(nextAllowed),
                  due_at = CASE WHEN version = \(version) THEN due_at ELSE \(nextAllowed) END, pending = (version <> \(version))
                WHERE device_id = \(device)
                """
        case .retry(let date):
            return "UPDATE ferry_notification_queue SET lease_until = NULL, attempts = attempts + 1, due_at = \(date) WHERE device_id = \(device)"
        case .dropped:
            return "UPDATE ferry_notification_queue SET lease_until = NULL, attempts = 0, pending = (version <> \(version)) WHERE device_id = \(device)"
        case .tokenRejected:
            return """
                UPDATE ferry_devices SET push_token = NULL, push_environment = NULL
                WHERE id = \(device) AND push_token IS NOT DISTINCT FROM \(notification.deviceToken)::text
                """
        }
    }

    func alertTargets(userID: UUID, space: UUID?, excluding: UUID?, limit: Int) async throws -> [AlertTarget] {
        // One statement for both: members of the space, or the account itself when no space is named.
        let rows = try await client.query(
            """
            SELECT d.id, d.push_token, d.push_environment FROM ferry_devices d
            WHERE (CASE WHEN \(space)::uuid IS NULL THEN d.user_id = \(userID)
                   ELSE d.user_id IN (SELECT user_id FROM ferry_members WHERE space_id = \(space)::uuid) END)
              AND d.push_token IS NOT NULL AND d.trust <> 'revoked' AND d.id IS DISTINCT FROM \(excluding)::uuid
            ORDER BY d.id LIMIT \(limit)
            """,
            logger: logger
        )
        var targets: [AlertTarget] = []
        for try await (id, token, environment) in rows.decode((UUID, String, String?).self) {
            targets.append(AlertTarget(deviceID: id, deviceToken: token, environment: environment.flatMap(PushEnvironment.init(rawValue:)) ?? .production))
        }
        return targets
    }

    func clearPushToken(deviceID: UUID, token: String?) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE ferry_devices SET push_token = NULL, push_environment = NULL
                WHERE id = \(deviceID) AND push_token IS NOT DISTINCT FROM \(token)::text
                """,
                logger: logger
            )
            try await connection.query("DELETE FROM ferry_notification_queue WHERE device_id = \(deviceID)", logger: logger)
        }
    }

    func markStreaming(deviceIDs: [UUID], until: Date?) async throws {
        guard !deviceIDs.isEmpty else { return }
        try await client.query(
            "UPDATE ferry_devices SET streaming_until = \(until)::timestamptz WHERE id = ANY (\(deviceIDs))", logger: logger
        )
    }
}
