import FerryClient
import FerryCore
import FerrySecurity
import Foundation
import Network
import Observation
import SwiftUI
import UIKit

/// The app's settings: point them at your server and your identifiers.
enum NotesConfig {
    /// The server (`ferry serve`); the simulator reaches one running on this Mac at 127.0.0.1.
    static let serverURL = URL(string: "http://127.0.0.1:8080")!
    /// The anon key that `ferry serve --print-keys` prints.
    static let anonKey = "PASTE THE ANON KEY HERE"
    /// The service of the Keychain items (session, device key): the app's bundle id.
    static let keychainService = "com.example.notes"
    /// A Keychain access group shared with extensions ("<team id>.com.example.notes.shared"), or `nil`.
    static let keychainAccessGroup: String? = nil
    /// An App Group whose container holds the store, so that extensions open it too ("group.com.example.notes"), or `nil`.
    static let appGroup: String? = nil
    /// The refresh task; also listed under BGTaskSchedulerPermittedIdentifiers in Info.plist.
    static let refreshTaskID = "com.example.notes.sync"
    #if DEBUG
    /// A build run from Xcode has sandbox tokens; TestFlight and App Store builds have production ones.
    static let pushEnvironment = PushEnvironment.sandbox
    #else
    static let pushEnvironment = PushEnvironment.production
    #endif

    /// Where each account's store lives: the App Group's container when there is one, else Application Support.
    static var storeFolder: URL {
        if let appGroup, let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: appGroup) {
            return container.appending(path: "Ferry")
        }
        return URL.applicationSupportDirectory.appending(path: "Ferry")
    }
}

/// The screen the app shows.
enum Screen: Equatable {
    case launching
    case signIn
    case offline(reason: String)
    case notes
}

/// Signs in, opens the account's store and engine, and follows the app's life: the engine runs while the app is
/// active and is suspended in the background, where only a push, the refresh task and the seconds after leaving sync
/// (docs/ios.md).
@MainActor
@Observable
final class AppModel {
    /// The signed-in account's store and engine.
    struct Account {
        let userID: UUID
        let store: LocalStore
        let engine: SyncEngine
        let keys: DeviceKeyPair
        let pathMonitor: NWPathMonitor
        let pathFeed: Task<Void, Never>
    }

    private(set) var screen = Screen.launching
    private(set) var account: Account?

    let auth: AuthClient
    let client: SyncClient
    private let router: LaunchRouter
    @ObservationIgnored private var engineRun: Task<Void, Never>?
    @ObservationIgnored private var isActive = false
    @ObservationIgnored private var pushToken: Data?

    init() {
        let sessions = KeychainSessionStore(service: NotesConfig.keychainService, accessGroup: NotesConfig.keychainAccessGroup)
        let auth = AuthClient(endpoint: ServerEndpoint(baseURL: NotesConfig.serverURL, apiKey: NotesConfig.anonKey), store: sessions)
        self.auth = auth
        client = SyncClient(auth: auth)
        router = LaunchRouter(
            probe: PathMonitorProbe(server: HealthProbe(server: NotesConfig.serverURL)), auth: auth,
            profiles: ProfileClient(auth: auth), history: FileLaunchHistory(folder: URL.applicationSupportDirectory.appending(path: "Launch"))
        )
        // A saved session opens the store now: a launch in the background (a push, the refresh task) needs the engine
        // before any screen appears. `launch()` closes it again if the server ended the session.
        if let saved = try? sessions.load() { try? open(for: saved.user.id) }
        // The server ending the session while the app runs leads back to sign-in.
        let states = auth.stateChanges()
        Task { [weak self] in
            for await state in states where !state.hasSession { await self?.sessionEnded() }
        }
    }

    // MARK: Launch and sign-in

    /// The cold launch: sign-in, an offline screen, or the notes; a network failure never signs anyone out.
    func launch() async {
        screen = .launching
        let decision = await router.coldLaunch()
        switch decision.route {
        case .welcome, .signIn:
            await closeAccount()
            screen = .signIn
        case .main, .onboarding, .offline:
            // Offline with a kept session still shows the notes: they are on this device.
            guard let session = try? await auth.session else {
                screen = .offline(reason: decision.reason)
                return
            }
            do {
                try open(for: session.user.id)
            } catch {
                screen = .offline(reason: "\(error)")
                return
            }
            if !decision.route.isOffline, !isRegistered { await registerDevice() }
            await showNotes()
        }
    }

    func signInWithApple(idToken: String, rawNonce: String, fullName: String?) async throws {
        let session = try await auth.signInWithApple(idToken: idToken, rawNonce: rawNonce, fullName: fullName)
        try await signedIn(session)
    }

    func signIn(email: String, code: String) async throws {
        let session = try await auth.verify(email: email, code: code, type: .email)
        try await signedIn(session)
    }

    /// Clears the push token first (after sign-out the session could not, and the old account's notifications would
    /// still reach this phone), then the session. The store's file stays for the next sign-in of the same account.
    func signOut() async {
        if let account { _ = try? await client.clearPushToken(device: account.store.deviceId) }
        await closeAccount()
        try? await auth.signOut()
        screen = .signIn
    }

    private func signedIn(_ session: AuthSession) async throws {
        if account?.userID != session.user.id { await closeAccount() }
        try open(for: session.user.id)
        await registerDevice()
        await showNotes()
    }

    private func showNotes() async {
        screen = .notes
        await account?.engine.trigger(.launch)
        if isActive { startEngine() }
    }

    private func sessionEnded() async {
        guard account != nil else { return }
        await closeAccount()
        screen = .signIn
    }

    // MARK: Store and engine

    /// Opens the account's store (one file per account) and its engine, which runs once the app is active.
    private func open(for userID: UUID) throws {
        if account?.userID == userID { return }
        let folder = NotesConfig.storeFolder.appending(path: userID.uuidString.lowercased())
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let schema = try SchemaParser.load(files: [Bundle.main.path(forResource: "notes", ofType: "yaml") ?? "notes.yaml"])
        let store = try LocalStore(
            fileURL: folder.appending(path: "notes.sqlite"), schema: schema, defaultSpace: userID,
            sharedAcrossProcesses: NotesConfig.appGroup != nil
        )
        let keys = try KeychainDeviceKeyStore(service: NotesConfig.keychainService, accessGroup: NotesConfig.keychainAccessGroup)
            .loadOrCreate()
        let engine = SyncEngine(store: store, remote: client, encryption: EndToEndEncryption(deviceKeys: keys, remote: client))
        let (monitor, feed) = Self.followPaths(into: engine)
        account = Account(userID: userID, store: store, engine: engine, keys: keys, pathMonitor: monitor, pathFeed: feed)
    }

    private func closeAccount() async {
        await stopEngine()
        account?.pathMonitor.cancel()
        account?.pathFeed.cancel()
        account = nil
    }

    /// Whether this device's registration went through for the account (the push routes and pushes need it).
    private var isRegistered: Bool {
        account.map { UserDefaults.standard.bool(forKey: "registered-\($0.userID)") } ?? false
    }

    /// After a sign-in: register this device (binding the session to it), upload what was written offline, hand over
    /// encryption keys, pull. Runs before the engine, and again at a later launch if the registration failed.
    private func registerDevice() async {
        guard let account else { return }
        let device = DeviceRegistration(
            name: UIDevice.current.name, type: UIDevice.current.userInterfaceIdiom == .pad ? .iosTablet : .iosPhone,
            hostname: "", publicKey: account.keys.publicKeyBase64
        )
        let result = await PostLoginSync(store: account.store, remote: client, deviceKeys: account.keys, device: device).run()
        UserDefaults.standard.set(result.device != nil, forKey: "registered-\(account.userID)")
        await registerPushToken()
    }

    /// Runs the engine until `stopEngine()` (the account closing). It keeps running in the background, suspended
    /// (`suspendSyncing()`): a background sync never starts or stops it.
    private func startEngine() {
        guard engineRun == nil, let engine = account?.engine else { return }
        engineRun = Task { try? await engine.run() }
    }

    /// Stops the engine for good (sign-out); the sync in flight stops between two transactions, keeping what the
    /// server acknowledged.
    private func stopEngine() async {
        guard let run = engineRun else { return }
        engineRun = nil
        run.cancel()
        await run.value
    }

    /// Hands the engine every network path change, in order (`PathMonitorProbe` answers only the launch's question).
    private static func followPaths(into engine: SyncEngine) -> (NWPathMonitor, Task<Void, Never>) {
        let monitor = NWPathMonitor()
        let (paths, feed) = AsyncStream.makeStream(of: (reachable: Bool, expensive: Bool).self)
        monitor.pathUpdateHandler = { @Sendable path in
            feed.yield((reachable: path.status == .satisfied, expensive: path.isExpensive))
        }
        monitor.start(queue: DispatchQueue(label: "notes.path-monitor"))
        let task = Task {
            for await path in paths {
                await engine.connectivityChanged(isReachable: path.reachable)
                await engine.networkCostChanged(isExpensive: path.expensive)
            }
        }
        return (monitor, task)
    }

    // MARK: The app's life

    func scenePhaseChanged(to phase: ScenePhase) async {
        switch phase {
        case .active: await becameActive()
        case .background: await enteredBackground()
        default: break
        }
    }

    private func becameActive() async {
        isActive = true
        await resumeSyncing(account?.engine)
        guard let account else { return }
        startEngine()
        // What an extension wrote meanwhile: the store's observation sees only this process's own writes.
        try? await account.store.noticeExternalChanges()
        await account.engine.activityChanged(isActive: true)
        await account.engine.trigger(.foreground)
    }

    private func enteredBackground() async {
        isActive = false
        guard let account else {
            await suspendSyncing(nil)
            return
        }
        await account.engine.activityChanged(isActive: false)
        BackgroundRefresh.schedule(identifier: NotesConfig.refreshTaskID, after: 15 * 60)
        // iOS suspends the app soon: wait a few seconds for the engine's next sync to push the last edits, then
        // suspend the engine, so that no sync holds the store's lock while the app is suspended.
        let backgroundTime = UIApplication.shared.beginBackgroundTask(withName: "Sync notes", expirationHandler: nil)
        let status = account.engine.status
        if status.pendingCount > 0 || status.isSynchronizing {
            _ = await account.engine.backgroundSync(timeLimit: .seconds(10))
        }
        if !isActive { await suspendSyncing(account.engine) }
        UIApplication.shared.endBackgroundTask(backgroundTime)
    }

    /// Before a suspension: the engine's sync in flight stops between two transactions and none starts until
    /// `resumeSyncing`; once that sync has ended (moments later, releasing the store's `.sync-lock`), the shared store
    /// refuses writes. iOS ends an app that is suspended holding a lock on a file in an App Group container.
    private func suspendSyncing(_ engine: SyncEngine?) async {
        if let engine {
            await engine.suspend()
            let asked = ContinuousClock.now
            while engine.status.isSynchronizing, !Task.isCancelled, ContinuousClock.now - asked < .seconds(2) {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        LocalStore.suspend()
    }

    /// After a suspension, or for background work that syncs: the store first, then the engine, whose waiting sync
    /// starts at once.
    private func resumeSyncing(_ engine: SyncEngine?) async {
        LocalStore.resume()
        await engine?.resume()
    }

    // MARK: Push and background refresh

    /// `didRegisterForRemoteNotificationsWithDeviceToken`: iOS may hand over a new token at any launch.
    func pushTokenArrived(_ token: Data) async {
        pushToken = token
        await registerPushToken()
    }

    /// Sends the token once the device is registered: the server takes it only from the device's own session.
    private func registerPushToken() async {
        guard let pushToken, let account, isRegistered else { return }
        _ = try? await client.registerPushToken(pushToken, environment: NotesConfig.pushEnvironment, device: account.store.deviceId)
    }

    /// A Ferry background notification: a sync of at most 25 s, unless this device already has the change. In the
    /// background the store and the engine are resumed for it (a suspended engine starts no sync) and suspended again
    /// after, unless the app became active meanwhile.
    func handleRemoteNotification(_ notification: RemoteNotification) async -> UIBackgroundFetchResult {
        guard let engine = account?.engine else { return .noData }
        let inBackground = !isActive
        if inBackground { await resumeSyncing(engine) }
        let result = await engine.handleRemoteNotification(notification)
        if inBackground, !isActive { await suspendSyncing(engine) }
        return result.fetchResult
    }

    /// The refresh task's work: a sync of at most 25 s, stopped early when the task's expiration handler cancels it,
    /// with the store and the engine resumed for it as for a notification.
    func backgroundRefresh() async -> Bool {
        guard let engine = account?.engine else { return true }
        BackgroundRefresh.schedule(identifier: NotesConfig.refreshTaskID, after: 15 * 60)
        let inBackground = !isActive
        if inBackground { await resumeSyncing(engine) }
        let result = await engine.backgroundSync(timeLimit: .seconds(25))
        if inBackground, !isActive { await suspendSyncing(engine) }
        if case .completed = result { return true }
        return false
    }
}
