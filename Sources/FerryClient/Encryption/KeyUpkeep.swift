import FerryCore
import FerrySecurity
import Foundation
import Logging

/// Keeps this device's part of encrypted spaces' keys: takes the keys sealed to it, makes the first key of a new
/// encrypted space and the next one after a revocation, and seals the keys it holds to trusted devices that lack
/// them. Each step that fails for one space or device is recorded and skipped; the next sync tries it again.
struct KeyUpkeep: Sendable {
    let store: LocalStore
    let remote: any DeviceRemote
    let keyring: SpaceKeyring
    let logger: Logger

    init(store: LocalStore, encryption: EndToEndEncryption, logger: Logger) {
        self.store = store
        self.remote = encryption.remote
        self.keyring = SpaceKeyring(store: store, deviceKeys: encryption.deviceKeys)
        self.logger = logger
    }

    func sealer(schema: Schema) -> RecordSealer { RecordSealer(schema: schema, keyring: keyring) }

    /// What one round did.
    struct Outcome: Sendable {
        var requests = 0
        var received = 0
        var created = 0
        var sealed = 0
        var failures: [KeyFailure] = []
    }

    /// Runs one round and adds its requests and seals to `report`.
    func run(_ report: inout SyncReport) async throws {
        let outcome = try await run()
        report.requests += outcome.requests
        report.sealedKeys += outcome.created + outcome.sealed
    }

    /// Runs one round; `progress` hears (sealed so far, to seal) while keys are handed out.
    ///
    /// - Throws: only when the server cannot be asked at all (network, session); a device the server does not know
    ///   yet (`device_not_registered`) has nothing to keep and returns an empty outcome.
    func run(progress: ((Int, Int) async -> Void)? = nil) async throws -> Outcome {
        var outcome = Outcome()
        guard var state = try await fetch(&outcome) else { return outcome }
        if try await startVersions(state, &outcome) {
            guard let refreshed = try await fetch(&outcome) else { return outcome }
            state = refreshed
        }
        try await seal(state.missing, &outcome, progress: progress)
        return outcome
    }

    /// `GET /sync/v1/secrets`, kept in the store; `nil` when this device is not registered.
    private func fetch(_ outcome: inout Outcome) async throws -> SecretsState? {
        let state: SecretsState
        do {
            outcome.requests += 1
            state = try await remote.secrets()
        } catch let error as RemoteError where error.code == .deviceNotRegistered {
            logger.debug("no key upkeep: this device is not registered")
            return nil
        }
        try store.saveSealedSecrets(state.secrets)
        try store.recordKeyVersions(Dictionary(state.spaces.map { ($0.spaceId, $0.keyVersion) }, uniquingKeysWith: max))
        outcome.received = state.secrets.count
        return state
    }

    /// Makes the first key of spaces that have none and the next key of spaces that must rotate (when this device
    /// holds the current one); whether any version started.
    private func startVersions(_ state: SecretsState, _ outcome: inout Outcome) async throws -> Bool {
        guard try store.deviceTrust() != .pending else { return false }
        var started = false
        for space in state.spaces {
            let due = space.keyVersion == 0
                || (space.rotationRequired && (try? keyring.key(space: space.spaceId, version: space.keyVersion)) != nil)
            guard due else { continue }
            let version = space.keyVersion + 1
            do {
                let key = try SpaceKey.generate(version: version)
                let row = try Self.sealedRow(key, space: space.spaceId, to: keyring.deviceKeys.publicKey, device: store.deviceId)
                outcome.requests += 1
                let result = try await remote.storeSecrets(StoreSecretsRequest(secrets: [row])).results.first
                if result?.status == .stored {
                    try store.saveSealedSecrets([row])
                    keyring.adopt(key, space: space.spaceId)
                    outcome.created += 1
                    started = true
                    logger.info("made a space key", metadata: ["ferry.space": "\(space.spaceId.lowercasedText)", "ferry.key.version": "\(version)"])
                } else {
                    // Most often another device started this version first; its key arrives sealed to this one.
                    outcome.failures.append(Self.failure(space.spaceId, store.deviceId, version, result?.code?.rawValue ?? "rejected", result?.message ?? "The server refused the new key."))
                }
            } catch let error as RemoteError where error.code == .deviceNotTrusted {
                try store.setDeviceTrust(.pending)
                return started
            } catch let error as EncryptionError {
                outcome.failures.append(Self.failure(space.spaceId, store.deviceId, version, error.code.rawValue, error.message))
            }
        }
        return started
    }

    /// Seals the keys this device holds to the devices that lack them, 1,000 rows per request.
    private func seal(_ missing: [MissingSecret], _ outcome: inout Outcome, progress: ((Int, Int) async -> Void)?) async throws {
        var rows: [SealedSecret] = []
        for wanted in missing {
            do {
                guard let key = try keyring.key(space: wanted.spaceId, version: wanted.keyVersion) else { continue }
                let recipient = try DevicePublicKey(base64Encoded: wanted.publicKey)
                rows.append(try Self.sealedRow(key, space: wanted.spaceId, to: recipient, device: wanted.deviceId))
            } catch let error as EncryptionError {
                outcome.failures.append(Self.failure(wanted.spaceId, wanted.deviceId, wanted.keyVersion, error.code.rawValue, error.message))
            }
        }
        await progress?(0, rows.count)
        var done = 0
        for start in stride(from: 0, to: rows.count, by: 1000) {
            let chunk = Array(rows[start..<min(start + 1000, rows.count)])
            outcome.requests += 1
            let response: StoreSecretsResponse
            do {
                response = try await remote.storeSecrets(StoreSecretsRequest(secrets: chunk))
            } catch let error as RemoteError where error.code == .deviceNotTrusted {
                try store.setDeviceTrust(.pending)
                return
            }
            for (row, result) in zip(chunk, response.results) {
                if result.status == .stored {
                    outcome.sealed += 1
                } else {
                    outcome.failures.append(Self.failure(row.spaceId, row.deviceId, row.keyVersion, result.code?.rawValue ?? "rejected", result.message ?? "The server refused the sealed key."))
                }
            }
            done += chunk.count
            await progress?(done, rows.count)
        }
    }

    static func sealedRow(_ key: SpaceKey, space: UUID, to recipient: DevicePublicKey, device: UUID) throws -> SealedSecret {
        let sealed = try SpaceKeySealer.seal(key, spaceID: space, to: recipient, deviceID: device)
        return SealedSecret(spaceId: space, deviceId: device, keyVersion: key.version, enc: sealed.encapsulatedKeyBase64, ciphertext: sealed.ciphertextBase64)
    }

    private static func failure(_ space: UUID, _ device: UUID, _ version: Int, _ code: String, _ message: String) -> KeyFailure {
        KeyFailure(space: space, device: device, keyVersion: version, code: code, message: message)
    }
}
