import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: DeviceStorage {
    static let deviceColumns =
        "id, user_id, name, type, hostname, public_key, push_token, push_environment, trust, created_at, last_seen_at, revoked_at"

    func device(id: UUID) async throws -> DeviceRecord? {
        try await Self.devices(
            try await client.query("SELECT \(unescaped: Self.deviceColumns) FROM ferry_devices WHERE id = \(id)", logger: logger)
        ).first
    }

    func devices(userID: UUID) async throws -> [DeviceRecord] {
        try await Self.devices(try await client.query(
            "SELECT \(unescaped: Self.deviceColumns) FROM ferry_devices WHERE user_id = \(userID) ORDER BY created_at, id", logger: logger
        ))
    }

    func registerDevice(
        id: UUID, userID: UUID, sessionID: UUID, decide: @Sendable (DeviceRegistrationContext) throws -> DeviceRecord
    ) async throws -> (device: DeviceRecord, isNew: Bool) {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                // Lock the account: its registrations run one at a time, so two first devices cannot both become trusted.
                try await connection.query("SELECT id FROM ferry_users WHERE id = \(userID) FOR UPDATE", logger: logger)
                let existing = try await Self.devices(try await connection.query(
                    "SELECT \(unescaped: Self.deviceColumns) FROM ferry_devices WHERE id = \(id) FOR UPDATE", logger: logger
                )).first
                let counts = try await connection.query(
                    """
                    SELECT count(*) FILTER (WHERE trust = 'trusted'), count(*) FILTER (WHERE trust <> 'revoked')
                    FROM ferry_devices WHERE user_id = \(userID)
                    """,
                    logger: logger
                )
                var (trusted, active): (Int64, Int64) = (0, 0)
                for try await row in counts.decode((Int64, Int64).self) { (trusted, active) = row }
                let device = try decide(DeviceRegistrationContext(existing: existing, hasTrustedDevice: trusted > 0, activeDeviceCount: Int(active)))
                if existing == nil {
                    try await connection.query(
                        """
                        INSERT INTO ferry_devices (id, user_id, name, type, hostname, public_key, push_token, push_environment, trust, created_at, last_seen_at)
                        VALUES (\(device.id), \(device.userID), \(device.name), \(device.type.rawValue), \(device.hostname), \(device.publicKey),
                          \(device.pushToken), \(device.pushEnvironment?.rawValue), \(device.trust.rawValue), \(device.createdAt), \(device.lastSeenAt))
                        """,
                        logger: logger
                    )
                } else {
                    try await connection.query(
                        """
                        UPDATE ferry_devices SET name = \(device.name), type = \(device.type.rawValue), hostname = \(device.hostname),
                          push_token = \(device.pushToken), push_environment = \(device.pushEnvironment?.rawValue), last_seen_at = \(device.lastSeenAt)
                        WHERE id = \(device.id)
                        """,
                        logger: logger
                    )
                }
                try await connection.query("UPDATE ferry_sessions SET device_id = \(device.id) WHERE id = \(sessionID)", logger: logger)
                return (device, existing == nil)
            }
        } catch let error as PostgresTransactionError {
            if let psql = error.closureError as? PSQLError, psql.serverInfo?[.sqlState] == "23505" {
                // Another account registered the same id at the same moment.
                throw ServiceError(.conflict, .deviceConflict, "Device id \(id.lowercasedText) belongs to another account; a device creates a new random id for each account.")
            }
            throw error.closureError ?? error
        }
    }

    func setPushToken(deviceID: UUID, userID: UUID, token: String?, environment: PushEnvironment?) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE ferry_devices SET push_token = \(token), push_environment = \(environment?.rawValue)
                WHERE id = \(deviceID) AND user_id = \(userID) RETURNING id
                """,
                logger: logger
            )
            var found = false
            for try await _ in rows { found = true }
            guard found else { return false }
            if let token {
                // A token is one app install's: another device row holding it must not be woken on this phone any more.
                try await connection.query(
                    "UPDATE ferry_devices SET push_token = NULL, push_environment = NULL WHERE push_token = \(token) AND id <> \(deviceID)",
                    logger: logger
                )
            }
            return true
        }
    }

    func markSeen(deviceID: UUID, now: Date) async throws {
        try await client.query(
            "UPDATE ferry_devices SET last_seen_at = \(now) WHERE id = \(deviceID) AND last_seen_at < \(now)", logger: logger
        )
    }

    func changeTrust(deviceID: UUID, userID: UUID, to trust: DeviceTrust, now: Date) async throws -> DeviceRecord? {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection -> DeviceRecord? in
                guard var device = try await Self.devices(try await connection.query(
                    "SELECT \(unescaped: Self.deviceColumns) FROM ferry_devices WHERE id = \(deviceID) AND user_id = \(userID) FOR UPDATE",
                    logger: logger
                )).first else { return nil }
                guard let next = device.trust.changed(to: trust) else { return device }
                device.trust = next
                device.revokedAt = next == .revoked ? now : nil
                try await connection.query(
                    "UPDATE ferry_devices SET trust = \(next.rawValue), revoked_at = \(device.revokedAt) WHERE id = \(deviceID)", logger: logger
                )
                if next == .revoked {
                    // Refresh tokens go with their sessions (ON DELETE CASCADE); access tokens then fail session_not_found.
                    try await connection.query("DELETE FROM ferry_sessions WHERE device_id = \(deviceID)", logger: logger)
                    try await connection.query(
                        """
                        UPDATE ferry_spaces s SET rotation_required = true WHERE s.is_encrypted AND EXISTS (
                          SELECT 1 FROM ferry_secrets x WHERE x.space_id = s.id AND x.device_id = \(deviceID) AND x.key_version = s.key_version)
                        """,
                        logger: logger
                    )
                }
                return device
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    static func devices(_ rows: PostgresRowSequence) async throws -> [DeviceRecord] {
        var devices: [DeviceRecord] = []
        for try await row in rows {
            devices.append(device(try row.decode(DeviceColumns.self)))
        }
        return devices
    }

    /// The columns of ``deviceColumns``, in order.
    typealias DeviceColumns = (UUID, UUID, String, String, String, String, String?, String?, String, Date, Date, Date?)

    static func device(_ columns: DeviceColumns) -> DeviceRecord {
        let (id, userID, name, type, hostname, publicKey, pushToken, pushEnvironment, trust, createdAt, lastSeenAt, revokedAt) = columns
        return DeviceRecord(
            id: id, userID: userID, name: name, type: DeviceKind(rawValue: type) ?? .other, hostname: hostname, publicKey: publicKey,
            pushToken: pushToken, pushEnvironment: pushEnvironment.flatMap(PushEnvironment.init(rawValue:)),
            trust: DeviceTrust(rawValue: trust) ?? .pending, createdAt: createdAt, lastSeenAt: lastSeenAt, revokedAt: revokedAt
        )
    }

    func sessionContext(id: UUID, withSpaces: Bool) async throws -> SessionContext? {
        let deviceColumns = Self.deviceColumns.split(separator: ", ").map { "d.\($0)" }.joined(separator: ", ")
        // With the spaces, one row per space of the account (one with null space columns when it has none), each
        // repeating the session and its device: one round trip where a pull took two.
        let (spaceColumns, spaceJoins, order) = withSpaces
            ? (
                ", sp.id, sp.name, sp.is_personal, sp.is_encrypted, sp.seq, sp.key_version, m.role",
                "LEFT JOIN ferry_members m ON m.user_id = s.user_id LEFT JOIN ferry_spaces sp ON sp.id = m.space_id",
                "ORDER BY sp.is_personal DESC, sp.created_at, sp.id"
            )
            : ("", "", "")
        let rows = try await client.query(
            """
            SELECT s.id, s.user_id, s.created_at, s.refreshed_at, s.device_id, \(unescaped: deviceColumns)\(unescaped: spaceColumns)
            FROM ferry_sessions s LEFT JOIN ferry_devices d ON d.id = s.device_id \(unescaped: spaceJoins)
            WHERE s.id = \(id) \(unescaped: order)
            """,
            logger: logger
        )
        var context: SessionContext?
        for try await row in rows {
            if context == nil {
                let columns = try row.decode(
                    (UUID, UUID, Date, Date, UUID?, UUID?, UUID?, String?, String?, String?, String?, String?, String?, String?, Date?, Date?, Date?).self
                )
                let session = SessionRecord(id: columns.0, userID: columns.1, createdAt: columns.2, refreshedAt: columns.3, deviceID: columns.4)
                var device: DeviceRecord?
                // The joined device's columns, all null for an unbound session.
                if let deviceID = columns.5, let userID = columns.6, let name = columns.7, let type = columns.8, let hostname = columns.9,
                   let publicKey = columns.10, let trust = columns.13, let createdAt = columns.14, let lastSeenAt = columns.15 {
                    device = Self.device((
                        deviceID, userID, name, type, hostname, publicKey, columns.11, columns.12, trust, createdAt, lastSeenAt, columns.16
                    ))
                }
                context = SessionContext(session: session, device: device, spaces: withSpaces ? [] : nil)
            }
            guard withSpaces else { continue }
            let cells = row.makeRandomAccess()
            guard let spaceID = try cells[17].decode(UUID?.self), let role = SpaceRole(rawValue: try cells[23].decode(String.self)) else { continue }
            context?.spaces?.append(SpaceSummary(
                id: spaceID, name: try cells[18].decode(String.self), isPersonal: try cells[19].decode(Bool.self),
                isEncrypted: try cells[20].decode(Bool.self), role: role, seq: try cells[21].decode(Int64.self),
                keyVersion: Int(try cells[22].decode(Int32.self))
            ))
        }
        return context
    }
}
