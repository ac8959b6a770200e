import FerryCore
import FerrySecurity
import Foundation

/// The server's device and sealed-key routes, as post-login sync and key upkeep need them; ``SyncClient`` is
/// the real one, tests wrap it to inject failures.
public protocol DeviceRemote: Sendable {
    /// Registers or updates this device and binds the session to it (`PUT /sync/v1/devices/{id}`), proving with
    /// `keys` (whose public key is `registration.publicKey`) that this is the device.
    func registerDevice(_ id: UUID, _ registration: DeviceRegistration, keys: DeviceKeyPair) async throws -> Device
    /// The account's devices (`GET /sync/v1/devices`).
    func devices() async throws -> [Device]
    /// Approves a pending device (`POST /sync/v1/devices/{id}/trust`); the caller must be trusted.
    func trustDevice(_ id: UUID) async throws -> Device
    /// Revokes a device (`POST /sync/v1/devices/{id}/revoke`): its sessions end and its keys must be rotated.
    func revokeDevice(_ id: UUID) async throws -> Device
    /// The keys sealed to this device, encrypted spaces' key versions, and the seals other devices wait for.
    func secrets() async throws -> SecretsState
    /// Stores sealed keys, one result per row (`PUT /sync/v1/secrets`).
    func storeSecrets(_ request: StoreSecretsRequest) async throws -> StoreSecretsResponse
}
