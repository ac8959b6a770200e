import FerryCore
import Foundation

/// What a registration found, read inside its transaction with the account serialised.
struct DeviceRegistrationContext: Sendable {
    /// The device already stored under the id, in any account.
    var existing: DeviceRecord?
    /// Whether the account has a trusted device at this moment.
    var hasTrustedDevice: Bool
    /// How many of the account's devices are not revoked.
    var activeDeviceCount: Int
}

/// One `PUT /sync/v1/secrets`, its rows checked for form, ready for the engine's transaction.
struct SecretsBatch: Sendable {
    /// The caller's account.
    var userID: UUID
    /// The caller's (trusted) device: the sealer of every stored row.
    var deviceID: UUID
    /// Each row, or why its form was refused.
    var entries: [Result<SealedSecret, Rejection>]
    var now: Date
}

/// What an authenticated request reads beside its token: the session, its bound device and, for a pull, its account's
/// spaces.
struct SessionContext: Sendable {
    var session: SessionRecord
    /// The device the session is bound to; `nil` for an unbound session.
    var device: DeviceRecord?
    /// The spaces of the session's account, as ``SpaceStorage/spaces(userID:)`` lists them; `nil` when not asked for.
    var spaces: [SpaceSummary]?
}

/// Devices, their trust, and the space keys sealed to them.
protocol DeviceStorage: Sendable {
    /// The device with this id, in any account.
    func device(id: UUID) async throws -> DeviceRecord?
    /// The session with this id, the device it is bound to and, `withSpaces`, its account's spaces, read in one go (one
    /// round trip on PostgreSQL): every authenticated request needs the first two, and a pull the spaces.
    func sessionContext(id: UUID, withSpaces: Bool) async throws -> SessionContext?
    /// The account's devices, oldest first, revoked ones included.
    func devices(userID: UUID) async throws -> [DeviceRecord]
    /// In one transaction with the account's registrations serialised: reads the context, stores what `decide`
    /// returns (inserted when new; otherwise only name, host name and push token change) and binds the session to it.
    /// `decide` throws to refuse, changing nothing. Returns the stored device and whether it was created.
    func registerDevice(
        id: UUID, userID: UUID, sessionID: UUID, decide: @Sendable (DeviceRegistrationContext) throws -> DeviceRecord
    ) async throws -> (device: DeviceRecord, isNew: Bool)
    /// Sets (or with `nil`, clears) the push token of the account's device; `false` when the account has no such device.
    func setPushToken(deviceID: UUID, userID: UUID, token: String?, environment: PushEnvironment?) async throws -> Bool
    /// Sets the device's last-seen time to `now` unless it is already later.
    func markSeen(deviceID: UUID, now: Date) async throws
    /// Moves a device of `userID` towards `trust` (see ``DeviceTrust/changed(to:)``) in one transaction. Revoking also
    /// deletes every session bound to the device and flags for rotation each encrypted space whose current key it held.
    /// Returns the device afterwards, or `nil` when the account has no such device.
    func changeTrust(deviceID: UUID, userID: UUID, to trust: DeviceTrust, now: Date) async throws -> DeviceRecord?
    /// The keys sealed to `deviceID`, the key states of the account's encrypted spaces, and the trusted devices that
    /// lack the current key of a space whose current key `deviceID` holds.
    func secretsState(deviceID: UUID, userID: UUID) async throws -> SecretsState
    /// Stores a batch in one transaction (see ``SecretsPlan``); one result per row.
    func storeSecrets(_ batch: SecretsBatch) async throws -> [SecretResult]
}
