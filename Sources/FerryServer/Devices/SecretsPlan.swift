import FerryCore
import Foundation

/// What a `PUT /sync/v1/secrets` does, decided in memory from the state it reads inside its transaction, so both
/// engines share one set of rules. Rows are decided in order; a row that starts a key version makes the next rows of
/// that version plain stores.
///
/// The version rule: a row of version `current + 1` starts a new key version (the space's first key, or a rotation)
/// with the caller as its creator; a viewer may hold and hand on keys, but not start a version. A row of version `current` is accepted from the version's creator, or from a
/// device that holds the version itself and only fills a slot no other device has sealed (it forwards the key it
/// holds). A row of an older version is accepted from a device that holds that version (versions before the current
/// one never change, so handing them on races with nothing). A stored row is never replaced by another device than its
/// sealer, and one batch starts at most one version of a space. Anything else is `key_version_conflict`: two devices
/// that rotate at once cannot each store a different key under one version, even when the first one has already sealed
/// its key to the second.
struct SecretsPlan: Sendable {
    /// An encrypted space's key state, as read under its lock.
    struct SpaceState: Sendable, Hashable {
        var isEncrypted: Bool
        var keyVersion: Int
        /// The device that started the current version.
        var creator: UUID?
        /// The caller's role in the space: only a role that writes records may start a key version.
        var role: SpaceRole
    }

    /// A device rows may be sealed to.
    struct Recipient: Sendable, Hashable {
        var userID: UUID
        var trust: DeviceTrust
    }

    /// Where a sealed key is stored: one row per (space, device, key version).
    struct Slot: Sendable, Hashable {
        var space: UUID
        var device: UUID
        var version: Int
    }

    /// One result per row, in order.
    var results: [SecretResult] = []
    /// Rows to upsert, in order, each with `sealedBy` set to the caller.
    var upserts: [SealedSecret] = []
    /// Key versions started by this batch, in order.
    var startedVersions: [(space: UUID, version: Int)] = []

    /// The spaces the batch names, in the order their rows are locked.
    static func spaces(_ entries: [Result<SealedSecret, Rejection>]) -> [UUID] {
        Set(entries.compactMap { try? $0.get().spaceId }).sorted { $0.uuidString < $1.uuidString }
    }

    /// The recipient devices the batch names.
    static func recipients(_ entries: [Result<SealedSecret, Rejection>]) -> [UUID] {
        Array(Set(entries.compactMap { try? $0.get().deviceId }))
    }

    /// Plans the batch.
    /// - Parameters:
    ///   - spaces: the named spaces the caller is a member of.
    ///   - members: the member user ids of each of those spaces.
    ///   - recipients: the named devices that exist.
    ///   - sealers: who sealed each stored row of those spaces, every version.
    init(
        batch: SecretsBatch, spaces: [UUID: SpaceState], members: [UUID: Set<UUID>], recipients: [UUID: Recipient],
        sealers: [Slot: UUID]
    ) {
        var state = State(spaces: spaces, sealers: sealers)
        for entry in batch.entries {
            do {
                let stored = try state.decide(try entry.get(), caller: batch.deviceID, members: members, recipients: recipients)
                upserts.append(stored)
                results.append(SecretResult(status: .stored))
            } catch {
                let rejection = error as? Rejection ?? Rejection(.invalidSecret, "\(error)")
                results.append(SecretResult(status: .rejected, code: rejection.code, message: rejection.message))
            }
        }
        startedVersions = state.started
    }

    /// The spaces' key states and current-version rows as the batch changes them, row by row.
    private struct State {
        var spaces: [UUID: SpaceState]
        var sealers: [Slot: UUID]
        var started: [(space: UUID, version: Int)] = []

        /// The row to store, or why it is refused.
        mutating func decide(
            _ row: SealedSecret, caller: UUID, members: [UUID: Set<UUID>], recipients: [UUID: Recipient]
        ) throws -> SealedSecret {
            guard let space = spaces[row.spaceId] else {
                throw Rejection(.spaceNotFound, "No space \(row.spaceId.lowercasedText) among yours.")
            }
            guard space.isEncrypted else {
                throw Rejection(.spaceNotEncrypted, "Space \(row.spaceId.lowercasedText) is not end-to-end encrypted; it has no key to seal.")
            }
            try SecretsPlan.check(recipient: recipients[row.deviceId], of: row, members: members[row.spaceId] ?? [])
            let slot = Slot(space: row.spaceId, device: row.deviceId, version: row.keyVersion)
            if let sealer = sealers[slot], sealer != caller {
                // A stored key is never replaced by another device: whatever its version, the recipient may already
                // use it, and a second key under one (space, version) would split the space.
                throw Rejection(
                    .keyVersionConflict,
                    "Device \(row.deviceId.lowercasedText) already holds key version \(row.keyVersion) of space \(row.spaceId.lowercasedText), sealed by another device; it is never replaced."
                )
            }
            if row.keyVersion == space.keyVersion + 1 {
                guard !started.contains(where: { $0.space == row.spaceId }) else {
                    throw Rejection(
                        .keyVersionConflict,
                        "This request already starts key version \(space.keyVersion) of space \(row.spaceId.lowercasedText); a request starts at most one version of a space."
                    )
                }
                guard space.role.canWrite else {
                    throw Rejection(
                        .insufficientRole,
                        "Your role in space \(row.spaceId.lowercasedText) is \(space.role.rawValue); only a member who writes may start key version \(row.keyVersion)."
                    )
                }
                spaces[row.spaceId] = SpaceState(isEncrypted: true, keyVersion: row.keyVersion, creator: caller, role: space.role)
                started.append((row.spaceId, row.keyVersion))
            } else {
                try SecretsPlan.checkStore(slot, space: space, caller: caller, sealers: sealers)
            }
            sealers[slot] = caller
            var stored = row
            stored.sealedBy = caller
            return stored
        }
    }

    fileprivate static func check(recipient: Recipient?, of row: SealedSecret, members: Set<UUID>) throws(Rejection) {
        guard let recipient, members.contains(recipient.userID) else {
            throw Rejection(
                .deviceNotFound,
                "No device \(row.deviceId.lowercasedText) belongs to a member of space \(row.spaceId.lowercasedText); seal keys only to the devices GET /sync/v1/secrets lists as missing."
            )
        }
        guard recipient.trust == .trusted else {
            throw Rejection(
                .deviceNotTrusted,
                "Device \(row.deviceId.lowercasedText) is \(recipient.trust.rawValue); keys are sealed only to trusted devices, so approve it first."
            )
        }
    }

    /// The rule for a row of an existing version (see the type's documentation).
    fileprivate static func checkStore(_ slot: Slot, space: SpaceState, caller: UUID, sealers: [Slot: UUID]) throws(Rejection) {
        let holdsVersion = sealers[Slot(space: slot.space, device: caller, version: slot.version)] != nil
        if slot.version >= 1, slot.version < space.keyVersion {
            // An older version is settled: a device that holds it may hand it on, so a device trusted after a
            // rotation can still read what was written before it.
            guard holdsVersion else {
                throw Rejection(.keyVersionConflict, "You hold no key version \(slot.version) of space \(slot.space.lowercasedText) to hand on.")
            }
            return
        }
        guard slot.version == space.keyVersion, slot.version >= 1 else {
            throw Rejection(
                .keyVersionConflict,
                "Space \(slot.space.lowercasedText) is at key version \(space.keyVersion); seal version \(space.keyVersion) or start version \(space.keyVersion + 1), not \(slot.version)."
            )
        }
        guard space.creator != caller else { return }
        let sealer = sealers[slot]
        guard holdsVersion, sealer == nil || sealer == caller else {
            throw Rejection(
                .keyVersionConflict,
                "Another device started key version \(slot.version) of space \(slot.space.lowercasedText); drop your key, read GET /sync/v1/secrets and use the key sealed to you."
            )
        }
    }
}
