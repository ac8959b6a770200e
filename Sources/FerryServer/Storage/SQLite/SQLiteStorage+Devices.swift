import FerryCore
import Foundation
import GRDB

extension SQLiteStorage: DeviceStorage {
    func device(id: UUID) async throws -> DeviceRecord? {
        try await pool.read { db in try Self.device(db, id: id) }
    }

    func sessionContext(id: UUID, withSpaces: Bool) async throws -> SessionContext? {
        try await pool.read { db in
            guard let session = try Row.fetchOne(db, sql: "SELECT * FROM ferry_sessions WHERE id = ?", arguments: [id.databaseText])
                .map(SessionRecord.init(row:))
            else { return nil }
            return SessionContext(
                session: session, device: try session.deviceID.flatMap { try Self.device(db, id: $0) },
                spaces: withSpaces ? try Self.spaces(db, userID: session.userID) : nil
            )
        }
    }

    func devices(userID: UUID) async throws -> [DeviceRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_devices WHERE user_id = ? ORDER BY created_at, id", arguments: [userID.databaseText]
            ).map(DeviceRecord.init(row:))
        }
    }

    func registerDevice(
        id: UUID, userID: UUID, sessionID: UUID, decide: @Sendable (DeviceRegistrationContext) throws -> DeviceRecord
    ) async throws -> (device: DeviceRecord, isNew: Bool) {
        // The pool's single writer serialises registrations, so two first devices cannot both become trusted.
        try await pool.write { db in
            let existing = try Self.device(db, id: id)
            let counts = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) FILTER (WHERE trust = 'trusted') AS trusted, count(*) FILTER (WHERE trust <> 'revoked') AS active
                    FROM ferry_devices WHERE user_id = ?
                    """,
                arguments: [userID.databaseText]
            )
            let device = try decide(DeviceRegistrationContext(
                existing: existing, hasTrustedDevice: (counts?["trusted"] ?? 0) > 0, activeDeviceCount: counts?["active"] ?? 0
            ))
            if existing == nil {
                try db.execute(
                    sql: """
                        INSERT INTO ferry_devices (id, user_id, name, type, hostname, public_key, push_token, push_environment, trust, created_at, last_seen_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        device.id.databaseText, device.userID.databaseText, device.name, device.type.rawValue, device.hostname, device.publicKey,
                        device.pushToken, device.pushEnvironment?.rawValue, device.trust.rawValue, Timestamp.format(device.createdAt),
                        Timestamp.format(device.lastSeenAt),
                    ]
                )
            } else {
                try db.execute(
                    sql: """
                        UPDATE ferry_devices SET name = ?, type = ?, hostname = ?, push_token = ?, push_environment = ?, last_seen_at = ?
                        WHERE id = ?
                        """,
                    arguments: [
                        device.name, device.type.rawValue, device.hostname, device.pushToken, device.pushEnvironment?.rawValue,
                        Timestamp.format(device.lastSeenAt), device.id.databaseText,
                    ]
                )
            }
            try db.execute(
                sql: "UPDATE ferry_sessions SET device_id = ? WHERE id = ?", arguments: [device.id.databaseText, sessionID.databaseText]
            )
            return (device, existing == nil)
        }
    }

    func setPushToken(deviceID: UUID, userID: UUID, token: String?, environment: PushEnvironment?) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE ferry_devices SET push_token = ?, push_environment = ? WHERE id = ? AND user_id = ?",
                arguments: [token, environment?.rawValue, deviceID.databaseText, userID.databaseText]
            )
            guard db.changesCount > 0 else { return false }
            if let token {
                // A token is one app install's: another device row holding it (an account signed out on this phone
                // without clearing it) must not be woken on this phone any more.
                try db.execute(
                    sql: "UPDATE ferry_devices SET push_token = NULL, push_environment = NULL WHERE push_token = ? AND id <> ?",
                    arguments: [token, deviceID.databaseText]
                )
            }
            return true
        }
    }

    func markSeen(deviceID: UUID, now: Date) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE ferry_devices SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?",
                arguments: [Timestamp.format(now), deviceID.databaseText, Timestamp.format(now)]
            )
        }
    }

    func changeTrust(deviceID: UUID, userID: UUID, to trust: DeviceTrust, now: Date) async throws -> DeviceRecord? {
        try await pool.write { db in
            guard var device = try Self.device(db, id: deviceID), device.userID == userID else { return nil }
            guard let next = device.trust.changed(to: trust) else { return device }
            device.trust = next
            device.revokedAt = next == .revoked ? now : nil
            try db.execute(
                sql: "UPDATE ferry_devices SET trust = ?, revoked_at = ? WHERE id = ?",
                arguments: [next.rawValue, device.revokedAt.map(Timestamp.format), deviceID.databaseText]
            )
            if next == .revoked {
                // Refresh tokens go with their sessions (ON DELETE CASCADE); access tokens then fail session_not_found.
                try db.execute(sql: "DELETE FROM ferry_sessions WHERE device_id = ?", arguments: [deviceID.databaseText])
                try db.execute(
                    sql: """
                        UPDATE ferry_spaces SET rotation_required = 1 WHERE is_encrypted = 1 AND EXISTS (
                          SELECT 1 FROM ferry_secrets x WHERE x.space_id = ferry_spaces.id AND x.device_id = ? AND x.key_version = ferry_spaces.key_version)
                        """,
                    arguments: [deviceID.databaseText]
                )
            }
            return device
        }
    }

    static func device(_ db: Database, id: UUID) throws -> DeviceRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM ferry_devices WHERE id = ?", arguments: [id.databaseText]).map(DeviceRecord.init(row:))
    }
}

extension DeviceRecord {
    init(row: Row) {
        func date(_ column: String) -> Date? { (row[column] as String?).flatMap(Timestamp.parse) }
        self.init(
            id: UUID(wireText: row["id"])!, userID: UUID(wireText: row["user_id"])!, name: row["name"],
            type: DeviceKind(rawValue: row["type"]) ?? .other, hostname: row["hostname"], publicKey: row["public_key"],
            pushToken: row["push_token"], pushEnvironment: (row["push_environment"] as String?).flatMap(PushEnvironment.init(rawValue:)),
            trust: DeviceTrust(rawValue: row["trust"]) ?? .pending, createdAt: date("created_at") ?? .distantPast,
            lastSeenAt: date("last_seen_at") ?? .distantPast, revokedAt: date("revoked_at")
        )
    }
}
