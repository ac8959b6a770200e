import FerryCore
import FerrySecurity
import Foundation
import Logging
import Synchronization

/// The sync an app runs right after sign-in (the coding-agent companion): register this device → push every local record not yet
/// on the server (same UUIDs) → fetch the account's devices → seal every missing (space, trusted device) key → pull.
///
/// Each step that fails for one item (the device registration, a record the server refuses, a key) is logged and
/// skipped and the rest continues; the result lists what was skipped and the next sync retries it. A run that
/// cannot reach the server returns a result with a ``PostLoginSyncResult/failure`` the app can offer to
/// "continue anyway" from. Running it again creates nothing twice: registration is an upsert, pushes are replays,
/// and only missing keys are sealed.
///
/// ```swift
/// let postLogin = PostLoginSync(store: store, remote: client, deviceKeys: keys,
///                               device: .init(name: "Ada's Mac", type: .macLaptop, hostname: host, publicKey: keys.publicKeyBase64))
/// Task { for await step in postLogin.progressUpdates() { bar.update(step.fractionCompleted, step.message) } }
/// let result = await postLogin.run()
/// ```
///
/// Run it before starting the app's ``SyncEngine`` (or while it is idle). Run while the engine syncs, it waits for the
/// store's sync lock after registering the device, as a sync does, so the two never push or seal keys at once (a store
/// in memory has no lock: there, run it before the engine).
public final class PostLoginSync: Sendable {
    let store: LocalStore
    let syncRemote: any SyncRemote
    let deviceRemote: any DeviceRemote
    let deviceKeys: DeviceKeyPair
    let registration: DeviceRegistration
    let logger: Logger
    private let progress = Broadcast<PostLoginProgress>(replaysCurrent: false)
    private let lastFraction = Mutex<Double>(0)

    /// Creates a post-login sync.
    ///
    /// - Parameters:
    ///   - remote: the server (a ``SyncClient``).
    ///   - deviceKeys: this device's key pair; its public key is registered, and the space keys sealed to it open with it.
    ///   - device: this device's name, type and host name (its public key is taken from `deviceKeys`).
    public convenience init(
        store: LocalStore, remote: any SyncRemote & DeviceRemote, deviceKeys: DeviceKeyPair, device: DeviceRegistration,
        logger: Logger = Logger(label: "ferry.post-login")
    ) {
        self.init(store: store, syncRemote: remote, deviceRemote: remote, deviceKeys: deviceKeys, device: device, logger: logger)
    }

    /// Creates a post-login sync whose two halves of the server may differ (tests wrap one to inject failures).
    public init(
        store: LocalStore, syncRemote: any SyncRemote, deviceRemote: any DeviceRemote, deviceKeys: DeviceKeyPair,
        device: DeviceRegistration, logger: Logger = Logger(label: "ferry.post-login")
    ) {
        self.store = store
        self.syncRemote = syncRemote
        self.deviceRemote = deviceRemote
        self.deviceKeys = deviceKeys
        var registration = device
        registration.publicKey = deviceKeys.publicKeyBase64
        self.registration = registration
        self.logger = logger
    }

    /// Progress of the next run, in order, ending with ``PostLoginProgress/Phase/finished`` at fraction 1.
    /// Subscribe before calling ``run()``; the stream finishes when the run does.
    public func progressUpdates() -> AsyncStream<PostLoginProgress> {
        progress.subscribe()
    }

    /// Runs every step; never throws: what failed is in the result.
    public func run() async -> PostLoginSyncResult {
        lastFraction.withLock { $0 = 0 }
        var result = PostLoginSyncResult()
        let started = store.now()
        let encryption = EndToEndEncryption(deviceKeys: deviceKeys, remote: deviceRemote)
        let pass = SyncPass(store: store, remote: syncRemote, pushBatchSize: SyncEngine.Configuration().pushBatchSize, pullLimit: 1000, encryption: encryption, logger: logger)
        let keys = KeyUpkeep(store: store, encryption: encryption, logger: logger)
        var report = SyncReport()
        var phase = PostLoginProgress.Phase.registeringDevice
        do {
            emit(.registeringDevice, 0, 1, "Registering this device")
            let registered = await registerDevice(&result)
            emit(.registeringDevice, 1, 1, registered ? "Registered this device" : "Could not register this device")

            // The engine's syncs (this process's or an extension's) and this run take turns on the store: two at once
            // could each seal a different first key for a new encrypted space.
            try await store.syncLock?.acquire()
            defer { store.syncLock?.release() }
            phase = .pushing
            if registered {
                try await push(pass, keys, &report)
            } else {
                // The server takes pushes only from a session bound to its device: the writes wait in the outbox
                // for the next post-login sync, which registers the device again.
                let waiting = try store.pendingCount()
                emit(.pushing, 0, waiting, waiting == 0 ? "Nothing to upload" : "\(waiting) local changes wait until this device is registered")
            }

            phase = .fetchingDevices
            emit(.fetchingDevices, 0, 1, "Fetching your devices")
            await fetchDevices(&result)
            emit(.fetchingDevices, 1, 1, "Found \(result.devices.count) device\(result.devices.count == 1 ? "" : "s")")

            phase = .sealingKeys
            emit(.sealingKeys, 0, 0, "Sharing encryption keys")
            let outcome = try await keys.run { done, total in
                self.emit(.sealingKeys, done, total, "Shared \(done) of \(total) encryption keys")
            }
            report.requests += outcome.requests
            result.sealedKeys = outcome.created + outcome.sealed
            result.skipped += outcome.failures.map {
                .init(phase: .sealingKeys, item: "key v\($0.keyVersion) of space \($0.space.lowercasedText) for device \($0.device.lowercasedText)", code: $0.code, message: $0.message)
            }
            if registered, try store.pendingCount() > 0, outcome.created + outcome.received > 0 {
                // Records of a space whose key only now exists waited in the outbox: send them too.
                try await push(pass, keys, &report)
            }

            phase = .pulling
            emit(.pulling, 0, 0, "Downloading changes")
            try await pass.pullAll(&report, keys: keys) { pulled in
                self.emit(.pulling, pulled, 0, "Downloaded \(pulled) changes")
            }
            try store.setLastSyncedAt(store.now())
        } catch {
            let (code, message) = Self.describe(error)
            logger.warning("post-login sync stopped", metadata: ["ferry.phase": "\(phase.rawValue)", "ferry.error.code": "\(code)"])
            result.failure = .init(phase: phase, code: code, message: message)
        }
        result.pushed = report.pushed
        result.pulled = report.pulled
        result.applied = report.applied
        result.requests += report.requests
        result.skipped += rejectedRecords(since: started)
        emit(.finished, 1, 1, result.isComplete ? "Everything is in sync" : "Finished; \(result.skipped.count + (result.failure == nil ? 0 : 1)) item(s) will be retried by the next sync")
        progress.finish()
        return result
    }

    /// Registers this device, binding the session to it; `false` (and a skipped item) when that failed.
    private func registerDevice(_ result: inout PostLoginSyncResult) async -> Bool {
        do {
            result.requests += 1
            let device = try await deviceRemote.registerDevice(store.deviceId, registration, keys: deviceKeys)
            try store.setDeviceTrust(device.trust)
            result.device = device
            return true
        } catch {
            let (code, message) = Self.describe(error)
            logger.warning("could not register this device; continuing", metadata: ["ferry.error.code": "\(code)"])
            result.skipped.append(.init(phase: .registeringDevice, item: "this device", code: code, message: message))
            return false
        }
    }

    private func push(_ pass: SyncPass, _ keys: KeyUpkeep, _ report: inout SyncReport) async throws {
        try await pass.createPendingSpaces(&report)
        let total = try store.pendingCount()
        emit(.pushing, 0, total, total == 0 ? "Nothing to upload" : "Uploading \(total) local changes")
        try await pass.pushOutbox(&report, keys: keys) { pushed in
            self.emit(.pushing, pushed, max(total, pushed), "Uploaded \(pushed) of \(max(total, pushed)) changes")
        }
    }

    private func fetchDevices(_ result: inout PostLoginSyncResult) async {
        do {
            result.requests += 1
            result.devices = try await deviceRemote.devices()
            if let this = result.devices.first(where: { $0.id == store.deviceId }) {
                try store.setDeviceTrust(this.trust)
            }
        } catch {
            let (code, message) = Self.describe(error)
            result.skipped.append(.init(phase: .fetchingDevices, item: "the device list", code: code, message: message))
        }
    }

    /// Records the server refused during this run: kept in the store's rejections, listed as skipped.
    private func rejectedRecords(since start: Date) -> [PostLoginSyncResult.Skipped] {
        ((try? store.rejections()) ?? []).filter { $0.rejectedAt >= start }.map {
            .init(phase: .pushing, item: "\($0.mutation.collection) \($0.mutation.id.lowercasedText)", code: $0.code, message: $0.message)
        }
    }

    private static func describe(_ error: any Error) -> (String, String) {
        switch error {
        case let error as any FerryError: (error.code.rawValue, error.description)
        case let error as EncryptionError: (error.code.rawValue, error.message)
        default: ("unexpected", "\(error)")
        }
    }

    /// Phases' shares of the whole run's fraction.
    private static let spans: [PostLoginProgress.Phase: (start: Double, width: Double)] = [
        .registeringDevice: (0, 0.05), .pushing: (0.05, 0.45), .fetchingDevices: (0.5, 0.05),
        .sealingKeys: (0.55, 0.15), .pulling: (0.7, 0.29), .finished: (1, 0),
    ]

    private func emit(_ phase: PostLoginProgress.Phase, _ completed: Int, _ total: Int, _ message: String) {
        let span = Self.spans[phase] ?? (0, 0)
        let within = total > 0 ? Double(min(completed, total)) / Double(total) : 0
        let fraction = lastFraction.withLock { last in
            last = max(last, span.start + span.width * within)
            return last
        }
        progress.publish(PostLoginProgress(phase: phase, completed: completed, total: total, message: message, fractionCompleted: fraction))
    }
}
