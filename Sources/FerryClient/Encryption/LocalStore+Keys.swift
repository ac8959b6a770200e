import FerryCore
import Foundation
import GRDB

/// What the device knows of encrypted spaces: their current key versions, and the space keys sealed to it.
///
/// Sealed keys are stored as the server sent them (HPKE to this device's public key), so the store holds no
/// space key in clear: opening one needs the device's private key, which lives in its key store.
extension LocalStore {
    /// The encrypted spaces this device knows of, with their current key version (0 while a space has no key).
    public func encryptedSpaces() throws -> [UUID: Int] {
        try read { db in
            var spaces: [UUID: Int] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT space, key_version FROM ferry_space_keys")) {
                if let space = UUID(uuidString: row["space"] as String) { spaces[space] = row["key_version"] as Int }
            }
            return spaces
        }
    }

    /// Whether the device knows `space` as encrypted, inside a transaction.
    func isEncrypted(_ space: UUID, in db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_space_keys WHERE space = ?)"), arguments: [Self.text(space)]) ?? false
    }

    /// Records the current key versions of encrypted spaces, as a pull or `GET /sync/v1/secrets` reports them.
    func recordKeyVersions(_ versions: [UUID: Int]) throws {
        guard !versions.isEmpty else { return }
        try write { db in
            for (space, version) in versions {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO ferry_space_keys (space, key_version) VALUES (?, ?)",
                    arguments: [Self.text(space), version]
                )
            }
        }
    }

    /// Keeps the sealed keys addressed to this device; others are ignored.
    func saveSealedSecrets(_ secrets: [SealedSecret]) throws {
        let mine = secrets.filter { $0.deviceId == deviceId }
        guard !mine.isEmpty else { return }
        try write { db in
            for secret in mine {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO ferry_secrets (space, key_version, enc, ciphertext) VALUES (?, ?, ?, ?)",
                    arguments: [Self.text(secret.spaceId), secret.keyVersion, secret.enc, secret.ciphertext]
                )
            }
        }
    }

    /// The key of `space` at `version` sealed to this device, if it holds one.
    func sealedSecret(space: UUID, version: Int) throws -> SealedSecret? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT enc, ciphertext FROM ferry_secrets WHERE space = ? AND key_version = ?",
                arguments: [Self.text(space), version]
            ).map { row in
                SealedSecret(spaceId: space, deviceId: deviceId, keyVersion: version, enc: row["enc"], ciphertext: row["ciphertext"])
            }
        }
    }

    /// The spaces whose records this device cannot read or write now: encrypted, and their current key not
    /// sealed to this device (or no key exists yet).
    public func lockedSpaces() throws -> Set<UUID> {
        try read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT k.space FROM ferry_space_keys k
                WHERE NOT EXISTS (SELECT 1 FROM ferry_secrets s WHERE s.space = k.space AND s.key_version = k.key_version)
                   OR k.key_version = 0
                """)
            return Set(rows.compactMap { UUID(uuidString: $0["space"] as String) })
        }
    }

    /// Whether this device knows `space` is not end-to-end encrypted: a pull reported it with no key version.
    /// A space it has not pulled yet may be either, so it is not "known plain".
    func isKnownPlain(_ db: Database, _ space: UUID) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM ferry_cursors WHERE space = ?1)
               AND NOT EXISTS (SELECT 1 FROM ferry_space_keys WHERE space = ?1)
               AND NOT EXISTS (SELECT 1 FROM ferry_pending_spaces WHERE id = ?1)
            """, arguments: [Self.text(space)]) ?? false
    }

    /// Whether `space` is end-to-end encrypted as far as this device knows (a key version, or queued as encrypted).
    func isKnownEncrypted(_ db: Database, _ space: UUID) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM ferry_space_keys WHERE space = ?1)
                OR EXISTS (SELECT 1 FROM ferry_pending_spaces WHERE id = ?1 AND encrypted = 1)
            """, arguments: [Self.text(space)]) ?? false
    }

    /// Spaces that pulls have reported or that this device created: those whose encryption it knows.
    func knownSpaces() throws -> Set<UUID> {
        try read { db in
            let rows = try String.fetchAll(db, sql: "SELECT space FROM ferry_cursors UNION SELECT space FROM ferry_space_keys UNION SELECT id FROM ferry_pending_spaces")
            return Set(rows.compactMap(UUID.init(uuidString:)))
        }
    }

    /// Whether this device registered itself with the server, and its trust there.
    public func deviceTrust() throws -> DeviceTrust? {
        try read { db in try Self.state(db, "device_trust").flatMap(DeviceTrust.init(rawValue:)) }
    }

    func setDeviceTrust(_ trust: DeviceTrust) throws {
        try write { db in try Self.setState(db, "device_trust", trust.rawValue) }
    }
}
