import FerryCore
import Foundation
import GRDB

extension SQLiteStorage {
    func secretsState(deviceID: UUID, userID: UUID) async throws -> SecretsState {
        try await pool.read { db in
            let secrets = try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_secrets WHERE device_id = ? ORDER BY space_id, key_version", arguments: [deviceID.databaseText]
            ).compactMap(SealedSecret.init(row:))
            let spaces = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.key_version, s.rotation_required FROM ferry_members m JOIN ferry_spaces s ON s.id = m.space_id
                    WHERE m.user_id = ? AND s.is_encrypted = 1 ORDER BY s.created_at, s.id
                    """,
                arguments: [userID.databaseText]
            ).compactMap { row -> SpaceKeyState? in
                guard let id = UUID(wireText: row["id"]) else { return nil }
                return SpaceKeyState(spaceId: id, keyVersion: row["key_version"], rotationRequired: row["rotation_required"])
            }
            let missing = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id AS space_id, x.key_version, d.id AS device_id, d.public_key
                    FROM ferry_spaces s
                    JOIN ferry_secrets x ON x.space_id = s.id AND x.device_id = ?
                    JOIN ferry_members m ON m.space_id = s.id
                    JOIN ferry_devices d ON d.user_id = m.user_id AND d.trust = 'trusted'
                    WHERE s.is_encrypted = 1 AND s.key_version > 0
                      AND s.id IN (SELECT space_id FROM ferry_members WHERE user_id = ?)
                      AND NOT EXISTS (SELECT 1 FROM ferry_secrets y WHERE y.space_id = s.id AND y.device_id = d.id AND y.key_version = x.key_version)
                    ORDER BY s.created_at, s.id, x.key_version, d.created_at, d.id
                    """,
                arguments: [deviceID.databaseText, userID.databaseText]
            ).compactMap { row -> MissingSecret? in
                guard let space = UUID(wireText: row["space_id"]), let device = UUID(wireText: row["device_id"]) else { return nil }
                return MissingSecret(spaceId: space, keyVersion: row["key_version"], deviceId: device, publicKey: row["public_key"])
            }
            return SecretsState(secrets: secrets, spaces: spaces, missing: missing)
        }
    }

    func storeSecrets(_ batch: SecretsBatch) async throws -> [SecretResult] {
        // The pool's single writer serialises concurrent stores, so two rotations of one space cannot interleave.
        try await pool.write { db in
            let spaceIDs = SecretsPlan.spaces(batch.entries).map(\.databaseText)
            let deviceIDs = SecretsPlan.recipients(batch.entries).map(\.databaseText)
            let spaceList = Self.placeholders(spaceIDs.count), deviceList = Self.placeholders(deviceIDs.count)
            var spaces: [UUID: SecretsPlan.SpaceState] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.is_encrypted, s.key_version, k.created_by_device, m.role FROM ferry_spaces s
                    JOIN ferry_members m ON m.space_id = s.id AND m.user_id = ?
                    LEFT JOIN ferry_space_keys k ON k.space_id = s.id AND k.version = s.key_version
                    WHERE s.id IN (\(spaceList))
                    """,
                arguments: StatementArguments([batch.userID.databaseText] + spaceIDs)
            ) {
                guard let id = UUID(wireText: row["id"]), let role = SpaceRole(rawValue: row["role"]) else { continue }
                spaces[id] = SecretsPlan.SpaceState(
                    isEncrypted: row["is_encrypted"], keyVersion: row["key_version"],
                    creator: (row["created_by_device"] as String?).flatMap(UUID.init(wireText:)), role: role
                )
            }
            var members: [UUID: Set<UUID>] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT space_id, user_id FROM ferry_members WHERE space_id IN (\(spaceList))", arguments: StatementArguments(spaceIDs)
            ) {
                guard let space = UUID(wireText: row["space_id"]), let user = UUID(wireText: row["user_id"]) else { continue }
                members[space, default: []].insert(user)
            }
            var recipients: [UUID: SecretsPlan.Recipient] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT id, user_id, trust FROM ferry_devices WHERE id IN (\(deviceList))", arguments: StatementArguments(deviceIDs)
            ) {
                guard let id = UUID(wireText: row["id"]), let user = UUID(wireText: row["user_id"]) else { continue }
                recipients[id] = SecretsPlan.Recipient(userID: user, trust: DeviceTrust(rawValue: row["trust"]) ?? .pending)
            }
            var sealers: [SecretsPlan.Slot: UUID] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT x.space_id, x.device_id, x.key_version, x.sealed_by FROM ferry_secrets x
                    WHERE x.space_id IN (\(spaceList))
                    """,
                arguments: StatementArguments(spaceIDs)
            ) {
                guard let space = UUID(wireText: row["space_id"]), let device = UUID(wireText: row["device_id"]),
                      let sealer = UUID(wireText: row["sealed_by"]) else { continue }
                sealers[SecretsPlan.Slot(space: space, device: device, version: row["key_version"])] = sealer
            }
            let plan = SecretsPlan(batch: batch, spaces: spaces, members: members, recipients: recipients, sealers: sealers)
            try Self.write(plan, db, sealer: batch.deviceID, now: batch.now)
            return plan.results
        }
    }

    private static func write(_ plan: SecretsPlan, _ db: Database, sealer: UUID, now: Date) throws {
        for (space, version) in plan.startedVersions {
            try db.execute(
                sql: "INSERT INTO ferry_space_keys (space_id, version, created_by_device, created_at) VALUES (?, ?, ?, ?)",
                arguments: [space.databaseText, version, sealer.databaseText, Timestamp.format(now)]
            )
            try db.execute(
                sql: "UPDATE ferry_spaces SET key_version = ?, rotation_required = 0 WHERE id = ?", arguments: [version, space.databaseText]
            )
        }
        for secret in plan.upserts {
            try db.execute(
                sql: """
                    INSERT INTO ferry_secrets (space_id, device_id, key_version, enc, ciphertext, sealed_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (space_id, device_id, key_version) DO UPDATE SET
                      enc = excluded.enc, ciphertext = excluded.ciphertext, sealed_by = excluded.sealed_by, updated_at = excluded.updated_at
                    """,
                arguments: [
                    secret.spaceId.databaseText, secret.deviceId.databaseText, secret.keyVersion, secret.enc, secret.ciphertext,
                    sealer.databaseText, Timestamp.format(now),
                ]
            )
        }
    }

    /// `?, ?, …` for `count` arguments (`NULL` for none, so `IN (NULL)` matches nothing).
    static func placeholders(_ count: Int) -> String {
        count == 0 ? "NULL" : Array(repeating: "?", count: count).joined(separator: ", ")
    }
}

extension SealedSecret {
    init?(row: Row) {
        guard let space = UUID(wireText: row["space_id"]), let device = UUID(wireText: row["device_id"]) else { return nil }
        self.init(
            spaceId: space, deviceId: device, keyVersion: row["key_version"], enc: row["enc"], ciphertext: row["ciphertext"],
            sealedBy: (row["sealed_by"] as String?).flatMap(UUID.init(wireText:))
        )
    }
}
