import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage {
    func secretsState(deviceID: UUID, userID: UUID) async throws -> SecretsState {
        try await client.withConnection { connection in
            var state = SecretsState(secrets: [], spaces: [], missing: [])
            let secrets = try await connection.query(
                """
                SELECT space_id, device_id, key_version, enc, ciphertext, sealed_by FROM ferry_secrets
                WHERE device_id = \(deviceID) ORDER BY space_id, key_version
                """,
                logger: logger
            )
            for try await (space, device, version, enc, ciphertext, sealer) in secrets.decode((UUID, UUID, Int32, String, String, UUID).self) {
                state.secrets.append(SealedSecret(spaceId: space, deviceId: device, keyVersion: Int(version), enc: enc, ciphertext: ciphertext, sealedBy: sealer))
            }
            let spaces = try await connection.query(
                """
                SELECT s.id, s.key_version, s.rotation_required FROM ferry_members m JOIN ferry_spaces s ON s.id = m.space_id
                WHERE m.user_id = \(userID) AND s.is_encrypted ORDER BY s.created_at, s.id
                """,
                logger: logger
            )
            for try await (space, version, rotation) in spaces.decode((UUID, Int32, Bool).self) {
                state.spaces.append(SpaceKeyState(spaceId: space, keyVersion: Int(version), rotationRequired: rotation))
            }
            let missing = try await connection.query(
                """
                SELECT s.id, x.key_version, d.id, d.public_key
                FROM ferry_spaces s
                JOIN ferry_secrets x ON x.space_id = s.id AND x.device_id = \(deviceID)
                JOIN ferry_members m ON m.space_id = s.id
                JOIN ferry_devices d ON d.user_id = m.user_id AND d.trust = 'trusted'
                WHERE s.is_encrypted AND s.key_version > 0
                  AND s.id IN (SELECT space_id FROM ferry_members WHERE user_id = \(userID))
                  AND NOT EXISTS (SELECT 1 FROM ferry_secrets y WHERE y.space_id = s.id AND y.device_id = d.id AND y.key_version = x.key_version)
                ORDER BY s.created_at, s.id, x.key_version, d.created_at, d.id
                """,
                logger: logger
            )
            for try await (space, version, device, publicKey) in missing.decode((UUID, Int32, UUID, String).self) {
                state.missing.append(MissingSecret(spaceId: space, keyVersion: Int(version), deviceId: device, publicKey: publicKey))
            }
            return state
        }
    }

    func storeSecrets(_ batch: SecretsBatch) async throws -> [SecretResult] {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                let spaceIDs = SecretsPlan.spaces(batch.entries)
                let deviceIDs = SecretsPlan.recipients(batch.entries)
                // Lock the spaces in id order, as a push does: two rotations of one space run one after the other.
                try await connection.query("SELECT id FROM ferry_spaces WHERE id = ANY(\(spaceIDs)) ORDER BY id FOR UPDATE", logger: logger)
                var spaces: [UUID: SecretsPlan.SpaceState] = [:]
                for try await (id, isEncrypted, version, creator, role) in try await connection.query(
                    """
                    SELECT s.id, s.is_encrypted, s.key_version, k.created_by_device, m.role FROM ferry_spaces s
                    JOIN ferry_members m ON m.space_id = s.id AND m.user_id = \(batch.userID)
                    LEFT JOIN ferry_space_keys k ON k.space_id = s.id AND k.version = s.key_version
                    WHERE s.id = ANY(\(spaceIDs))
                    """,
                    logger: logger
                ).decode((UUID, Bool, Int32, UUID?, String).self) {
                    guard let role = SpaceRole(rawValue: role) else { continue }
                    spaces[id] = SecretsPlan.SpaceState(isEncrypted: isEncrypted, keyVersion: Int(version), creator: creator, role: role)
                }
                var members: [UUID: Set<UUID>] = [:]
                for try await (space, user) in try await connection.query(
                    "SELECT space_id, user_id FROM ferry_members WHERE space_id = ANY(\(spaceIDs))", logger: logger
                ).decode((UUID, UUID).self) {
                    members[space, default: []].insert(user)
                }
                var recipients: [UUID: SecretsPlan.Recipient] = [:]
                for try await (id, user, trust) in try await connection.query(
                    "SELECT id, user_id, trust FROM ferry_devices WHERE id = ANY(\(deviceIDs))", logger: logger
                ).decode((UUID, UUID, String).self) {
                    recipients[id] = SecretsPlan.Recipient(userID: user, trust: DeviceTrust(rawValue: trust) ?? .pending)
                }
                var sealers: [SecretsPlan.Slot: UUID] = [:]
                for try await (space, device, version, sealer) in try await connection.query(
                    """
                    SELECT x.space_id, x.device_id, x.key_version, x.sealed_by FROM ferry_secrets x
                    WHERE x.space_id = ANY(\(spaceIDs))
                    """,
                    logger: logger
                ).decode((UUID, UUID, Int32, UUID).self) {
                    sealers[SecretsPlan.Slot(space: space, device: device, version: Int(version))] = sealer
                }
                let plan = SecretsPlan(batch: batch, spaces: spaces, members: members, recipients: recipients, sealers: sealers)
                try await Self.write(plan, connection, sealer: batch.deviceID, now: batch.now, logger: logger)
                return plan.results
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    private static func write(_ plan: SecretsPlan, _ connection: PostgresConnection, sealer: UUID, now: Date, logger: Logger) async throws {
        for (space, version) in plan.startedVersions {
            try await connection.query(
                """
                INSERT INTO ferry_space_keys (space_id, version, created_by_device, created_at)
                VALUES (\(space), \(Int32(version)), \(sealer), \(now))
                """,
                logger: logger
            )
            try await connection.query(
                "UPDATE ferry_spaces SET key_version = \(Int32(version)), rotation_required = false WHERE id = \(space)", logger: logger
            )
        }
        for secret in plan.upserts {
            try await connection.query(
                """
                INSERT INTO ferry_secrets (space_id, device_id, key_version, enc, ciphertext, sealed_by, updated_at)
                VALUES (\(secret.spaceId), \(secret.deviceId), \(Int32(secret.keyVersion)), \(secret.enc), \(secret.ciphertext), \(sealer), \(now))
                ON CONFLICT (space_id, device_id, key_version) DO UPDATE SET
                  enc = excluded.enc, ciphertext = excluded.ciphertext, sealed_by = excluded.sealed_by, updated_at = excluded.updated_at
                """,
                logger: logger
            )
        }
    }
}
