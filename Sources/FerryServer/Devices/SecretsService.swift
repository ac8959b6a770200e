import FerryCore
import FerrySecurity
import Foundation
import Logging

/// The rules of sealed space keys: what a device reads (`GET /sync/v1/secrets`) and stores (`PUT`).
///
/// Engine-agnostic: storage runs each store in one transaction and shares ``SecretsPlan`` for the rules.
struct SecretsService: Sendable {
    let storage: any DeviceStorage
    let limits: SyncLimits
    let logger: Logger
    /// Tells every instance's cached session contexts that a space's key version may have moved.
    let events: any RealtimeFeed
    var now: @Sendable () -> Date = Date.init

    /// The keys sealed to the caller's device, its account's encrypted spaces' key states, and the devices waiting
    /// for a key the caller can hand out.
    func state(_ caller: SyncCaller) async throws -> SecretsState {
        guard let device = caller.device else {
            throw ServiceError(.forbidden, .deviceNotRegistered, "This session is not bound to a device; register it with PUT /sync/v1/devices/{id} first.")
        }
        return try await storage.secretsState(deviceID: device.id, userID: caller.userID)
    }

    /// Stores sealed keys, each an upsert on (space, device, key version); one result per row.
    func store(_ caller: SyncCaller, _ request: StoreSecretsRequest) async throws -> StoreSecretsResponse {
        let device = try caller.trustedDevice()
        guard request.secrets.count <= limits.maximumSecretsBatchLength else {
            throw ServiceError(.unprocessable, .batchTooLarge,
                "The request has \(request.secrets.count) sealed keys; send at most \(limits.maximumSecretsBatchLength) per request."
            )
        }
        let batch = SecretsBatch(userID: caller.userID, deviceID: device.id, entries: request.secrets.map(Self.checkForm), now: now())
        let results = try await storage.storeSecrets(batch)
        let stored = Set(zip(request.secrets, results).filter { $0.1.status != .rejected }.map(\.0.spaceId))
        if !stored.isEmpty { await events.publish(stored.sorted { $0.uuidString < $1.uuidString }.map { .keysChanged(space: $0) }) }
        logger.debug("secrets stored", metadata: [
            "ferry.device.id": "\(device.id.lowercasedText)", "ferry.secrets.rows": "\(results.count)",
            "ferry.secrets.rejected": "\(results.filter { $0.status == .rejected }.count)",
        ])
        return StoreSecretsResponse(results: results)
    }

    /// The row when its form is right: a version from 1, `enc` the canonical base64 of a usable 32-byte X25519 key,
    /// `ciphertext` the canonical base64 of 48 bytes. The server cannot check more: it never sees the key.
    static func checkForm(_ row: SealedSecret) -> Result<SealedSecret, Rejection> {
        func invalid(_ problem: String) -> Rejection {
            Rejection(.invalidSecret, "The sealed key for device \(row.deviceId.lowercasedText) in space \(row.spaceId.lowercasedText) \(problem); seal it again with SpaceKeySealer.")
        }
        guard (1..<Int(Int32.max)).contains(row.keyVersion) else {
            return .failure(invalid("has key version \(row.keyVersion); versions start at 1 and grow by one per rotation"))
        }
        let sealed: SealedSpaceKey
        do {
            sealed = try SealedSpaceKey(keyVersion: row.keyVersion, encapsulatedKeyBase64: row.enc, ciphertextBase64: row.ciphertext)
        } catch {
            return .failure(invalid("is not standard base64 with padding"))
        }
        guard sealed.encapsulatedKey.count == 32, sealed.ciphertext.count == 48 else {
            return .failure(invalid("has \(sealed.encapsulatedKey.count) bytes of enc and \(sealed.ciphertext.count) of ciphertext instead of 32 and 48"))
        }
        guard (try? DevicePublicKey(rawRepresentation: sealed.encapsulatedKey)) != nil else {
            return .failure(invalid("has a low-order enc that no device could open"))
        }
        return .success(row)
    }
}
