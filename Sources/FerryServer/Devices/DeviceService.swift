import FerryCore
import FerrySecurity
import Foundation
import Logging

/// The rules of devices and trust: registration, approval, revocation, and the check every bound request passes.
///
/// Engine-agnostic: storage carries out each decision in one transaction; the rules live here.
struct DeviceService: Sendable {
    let storage: any DeviceStorage
    let limits: SyncLimits
    let proofs: DeviceProofVerifier
    let logger: Logger
    /// Tells open streams when a device is revoked, so its stream closes.
    let events: any RealtimeFeed
    /// The pulls' session contexts in memory (``SessionContextCache``); `nil` reads each from the database.
    var contexts: SessionContextCache?
    var now: @Sendable () -> Date = Date.init

    /// The verified caller of a request with `Authorization: Bearer <access token>`, with its bound device and,
    /// `withSpaces`, its account's spaces: all read from the database in one go (see ``caller(_:)``), and for a pull
    /// kept in ``contexts`` for the next one (which ``callerFromMemory(authorization:auth:until:)`` tries first).
    func caller(authorization: String?, auth: AuthService, withSpaces: Bool = false) async throws -> SyncCaller {
        let contexts = withSpaces ? contexts : nil
        let (caller, context) = try await auth.authenticate(authorization: authorization) { [storage] sessionID in
            let ticket = contexts?.ticket()
            let read = try await storage.sessionContext(id: sessionID, withSpaces: withSpaces)
            if let read, let ticket { contexts?.store(read, ticket: ticket) }
            return (read?.session, read)
        }
        var resolved = try await resolve(caller, device: context?.device)
        // The spaces of the token's account: a session is always its own account's, but the claim decides.
        if context?.session.userID == caller.userID { resolved.spaces = context?.spaces }
        return resolved
    }

    /// The caller of a pull answered wholly from memory, with no database step to bound: the session's context held
    /// (on PostgreSQL, proven current by a fence heard before `deadline`), its device not due a last-seen write. `nil`
    /// for anything else (a token refused included), and the pull takes ``caller(authorization:auth:withSpaces:)``
    /// under the request deadline.
    func callerFromMemory(authorization: String?, auth: AuthService, until deadline: ContinuousClock.Instant) async -> SyncCaller? {
        guard let contexts else { return nil }
        // A fence that takes longer than its watchdog's first bound will not come sooner: the database answers then.
        let fenceDeadline = min(deadline, .now + EventFence.timeout)
        guard let (caller, context) = try? await auth.authenticate(authorization: authorization, lookUp: { sessionID in
            guard let cached = await contexts.context(session: sessionID, until: fenceDeadline) else { throw CancellationError() }
            return (cached.session, cached)
        }), context.session.userID == caller.userID else { return nil }
        var resolved = SyncCaller(account: caller, spaces: context.spaces, spacesMayLag: true)
        if let id = caller.deviceID, let device = context.device, device.id == id, device.userID == caller.userID {
            guard device.trust != .revoked, now().timeIntervalSince(device.lastSeenAt) < limits.lastSeenInterval.timeInterval else { return nil }
            resolved.device = device
        }
        return resolved
    }

    /// The caller with its bound device. A revoked device is refused (403 `device_revoked`); a bound device's
    /// `lastSeenAt` moves forward, at most once per ``SyncLimits/lastSeenInterval``.
    func caller(_ caller: AuthService.Caller) async throws -> SyncCaller {
        guard let id = caller.deviceID else { return SyncCaller(account: caller) }
        return try await resolve(caller, device: try await storage.device(id: id))
    }

    private func resolve(_ caller: AuthService.Caller, device: DeviceRecord?) async throws -> SyncCaller {
        var resolved = SyncCaller(account: caller)
        guard let id = caller.deviceID, var device, device.id == id, device.userID == caller.userID else {
            return resolved
        }
        guard device.trust != .revoked else { throw Self.revoked(id) }
        let time = now()
        if time.timeIntervalSince(device.lastSeenAt) >= limits.lastSeenInterval.timeInterval {
            try await storage.markSeen(deviceID: id, now: time)
            device.lastSeenAt = time
            contexts?.noteSeen(session: caller.sessionID, at: time)
        }
        resolved.device = device
        return resolved
    }

    /// A challenge sealed to `request.publicKey` for device `id`: the device opens it and sends the nonce back as the
    /// proof of its registration.
    func challenge(_ caller: SyncCaller, id: UUID, _ request: DeviceChallengeRequest) throws -> DeviceChallenge {
        try proofs.challenge(sessionID: caller.sessionID, deviceID: id, publicKey: try Self.publicKey(request.publicKey), now: now())
    }

    /// Registers the caller's device or updates it, and binds the caller's session to it.
    ///
    /// A session not yet bound to this device must prove it holds the device's private key, so that knowing a device's
    /// id and public key (listed by `GET /sync/v1/devices`) is not enough to act as it; a session bound to it already
    /// updates it without.
    func register(_ caller: SyncCaller, id: UUID, _ registration: DeviceRegistration) async throws -> (device: Device, isNew: Bool) {
        let valid = try Self.validated(registration)
        let time = now()
        if caller.device?.id != id {
            try proofs.verify(
                registration.proof, sessionID: caller.sessionID, deviceID: id, publicKey: try Self.publicKey(valid.publicKey), now: time
            )
        }
        let (userID, limits) = (caller.userID, limits)
        let (device, isNew) = try await storage.registerDevice(id: id, userID: userID, sessionID: caller.sessionID) { context in
            try Self.decide(context, id: id, userID: userID, registration: valid, limits: limits, now: time)
        }
        // The session is bound to the device now: contexts cached without it go (on every instance).
        if caller.device?.id != id { await events.publish([.sessionsChanged(userID)]) }
        if isNew {
            logger.info("device registered", metadata: ["ferry.device.id": "\(id.lowercasedText)", "ferry.device.trust": "\(device.trust.rawValue)"])
        }
        return (device.wire(currentDeviceID: id), isNew)
    }

    /// Sets the calling device's push token (`PUT /sync/v1/devices/{id}/push-token`), or clears it with `nil`.
    func setPushToken(_ caller: SyncCaller, device id: UUID, _ request: PushTokenRequest?) async throws -> Device {
        guard let device = caller.device, device.id == id else {
            throw ServiceError(.forbidden, .deviceNotRegistered,
                "Only the device itself sets its push token: this session is bound to \(caller.device?.id.lowercasedText ?? "no device"), not \(id.lowercasedText)."
            )
        }
        let token = try request.map { try Self.pushToken($0.token) }
        guard try await storage.setPushToken(deviceID: id, userID: caller.userID, token: token, environment: request?.environment) else {
            throw ServiceError(.notFound, .deviceNotFound, "No device \(id.lowercasedText) in this account.")
        }
        var updated = device
        updated.pushToken = token
        updated.pushEnvironment = request?.environment
        return updated.wire(currentDeviceID: id)
    }

    /// The account's devices, oldest first.
    func list(_ caller: SyncCaller) async throws -> DeviceList {
        DeviceList(devices: try await storage.devices(userID: caller.userID).map { $0.wire(currentDeviceID: caller.device?.id) })
    }

    /// Approves a pending device of the caller's account; the caller must be a trusted device.
    func trust(_ caller: SyncCaller, device id: UUID) async throws -> Device {
        _ = try caller.trustedDevice()
        let device = try await change(caller, device: id, to: .trusted)
        await events.publish([.sessionsChanged(caller.userID)])
        guard device.trust != .revoked else {
            throw ServiceError(.conflict, .deviceRevoked, "Device \(id.lowercasedText) was revoked, and a revoked device is never trusted again; register the machine under a new device id.")
        }
        return device.wire(currentDeviceID: caller.device?.id)
    }

    /// Revokes a device of the caller's account (possibly the caller's own); the caller must be a trusted device.
    func revoke(_ caller: SyncCaller, device id: UUID) async throws -> Device {
        _ = try caller.trustedDevice()
        let device = try await change(caller, device: id, to: .revoked)
        logger.info("device revoked", metadata: ["ferry.device.id": "\(id.lowercasedText)"])
        await events.publish([.accountChanged(caller.userID)])
        return device.wire(currentDeviceID: caller.device?.id)
    }

    /// Revokes any device, for an operator in the console: as the account's own revocation, its sessions end and its
    /// stream closes.
    func revokeByOperator(_ id: UUID) async throws -> DeviceRecord {
        guard let found = try await storage.device(id: id),
              let device = try await storage.changeTrust(deviceID: id, userID: found.userID, to: .revoked, now: now())
        else {
            throw ServiceError(.notFound, .deviceNotFound, "No device has the id \(id.lowercasedText).")
        }
        logger.info("device revoked by an operator", metadata: ["ferry.device.id": "\(id.lowercasedText)"])
        await events.publish([.accountChanged(found.userID)])
        return device
    }

    private func change(_ caller: SyncCaller, device id: UUID, to trust: DeviceTrust) async throws -> DeviceRecord {
        guard let device = try await storage.changeTrust(deviceID: id, userID: caller.userID, to: trust, now: now()) else {
            throw ServiceError(.notFound, .deviceNotFound, "No device \(id.lowercasedText) in your account.")
        }
        return device
    }

    /// The registration rules, applied inside the storage's transaction.
    ///
    /// A new device is trusted when the account has no trusted device at that moment: its first device, or the
    /// recovery of an account whose trusted devices were all revoked. That is safe: trust only lets a device receive
    /// keys that other trusted devices seal to it, and an account with no trusted device has nobody left who could.
    static func decide(
        _ context: DeviceRegistrationContext, id: UUID, userID: UUID, registration: DeviceRegistration, limits: SyncLimits, now: Date
    ) throws -> DeviceRecord {
        guard var device = context.existing else {
            guard context.activeDeviceCount < limits.maximumDevicesPerAccount else {
                throw ServiceError(.conflict, .tooManyDevices,
                    "The account has \(limits.maximumDevicesPerAccount) devices, the most this server allows; revoke one you no longer use (ferry devices revoke)."
                )
            }
            return DeviceRecord(
                id: id, userID: userID, name: registration.name, type: registration.type, hostname: registration.hostname,
                publicKey: registration.publicKey, pushToken: registration.pushToken,
                pushEnvironment: registration.pushToken == nil ? nil : registration.pushEnvironment ?? .production,
                trust: context.hasTrustedDevice ? .pending : .trusted, createdAt: now, lastSeenAt: now
            )
        }
        guard device.userID == userID else {
            throw ServiceError(.conflict, .deviceConflict, "Device id \(id.lowercasedText) belongs to another account; a device creates a new random id for each account.")
        }
        guard device.publicKey == registration.publicKey else {
            throw ServiceError(.conflict, .deviceKeyMismatch, "Device \(id.lowercasedText) is registered with another public key, and a device key is never replaced; restore the device's key or register under a new device id.")
        }
        guard device.trust != .revoked else { throw revoked(id) }
        device.name = registration.name
        device.type = registration.type
        device.hostname = registration.hostname
        // A registration without a token (a rename, a sign-in) keeps the one the system gave the app; the token has its
        // own route to change or clear it.
        if let token = registration.pushToken {
            device.pushToken = token
            device.pushEnvironment = registration.pushEnvironment ?? .production
        }
        device.lastSeenAt = max(device.lastSeenAt, now)
        return device
    }

    /// The registration with its name trimmed, or 422 `invalid_device` naming the broken rule.
    static func validated(_ registration: DeviceRegistration) throws -> DeviceRegistration {
        var valid = registration
        valid.name = registration.name.trimmingCharacters(in: .whitespacesAndNewlines)
        func invalid(_ message: String) -> ServiceError { ServiceError(.unprocessable, .invalidDevice, message) }
        guard valid.name.fits(characters: 1...100), !valid.name.containsControlCharacter else {
            throw invalid("A device needs a name of 1 to 100 characters (at most 400 bytes of UTF-8) without control characters.")
        }
        guard valid.hostname.fits(characters: 0...255), !valid.hostname.containsControlCharacter else {
            throw invalid("A device's hostname has at most 255 characters and no control characters.")
        }
        if let token = valid.pushToken { valid.pushToken = try pushToken(token) }
        _ = try publicKey(valid.publicKey)
        return valid
    }

    /// An APNs device token in the one form stored: lowercase hexadecimal (it goes into APNs' URL path), or 422
    /// `invalid_device`.
    static func pushToken(_ text: String) throws -> String {
        let isHex = text.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
        guard isHex, text.utf8.count.isMultiple(of: 2), (16...512).contains(text.utf8.count) else {
            throw ServiceError(.unprocessable, .invalidDevice,
                "A push token is the hexadecimal text of the bytes the system gave the app (64 characters today), not '\(text.prefix(80))'."
            )
        }
        return text.lowercased()
    }

    /// The public key, or 422 `invalid_device` saying what is wrong with it.
    static func publicKey(_ text: String) throws -> DevicePublicKey {
        do {
            return try DevicePublicKey(base64Encoded: text)
        } catch let error as EncryptionError {
            throw ServiceError(.unprocessable, .invalidDevice, "publicKey: \(error.message)")
        }
    }

    static func revoked(_ id: UUID) -> ServiceError {
        ServiceError(.forbidden, .deviceRevoked, "Device \(id.lowercasedText) was revoked; sign in again on this machine as a new device, and approve it from a trusted one.")
    }
}

extension String {
    /// Whether any character is a control character (NUL, line breaks, escapes …).
    var containsControlCharacter: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Whether the text has `characters` characters in `range` and at most 4 UTF-8 bytes per allowed character: a
    /// character can carry any number of combining marks, so a limit in characters alone does not bound the size.
    func fits(characters range: ClosedRange<Int>) -> Bool {
        utf8.count <= 4 * range.upperBound && range.contains(count)
    }
}
