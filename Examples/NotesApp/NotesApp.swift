import BackgroundTasks
import FerryClient
import SwiftUI
import UIKit

@main
struct NotesApp: App {
    @UIApplicationDelegateAdaptor(AppDelegate.self) private var appDelegate
    @Environment(\.scenePhase) private var scenePhase

    var body: some Scene {
        WindowGroup {
            RootView(model: appDelegate.model)
        }
        .onChange(of: scenePhase) { _, phase in
            let model = appDelegate.model
            Task { await model.scenePhaseChanged(to: phase) }
        }
    }
}

/// The system's callbacks for pushes and the refresh task, handed to the model.
@MainActor
final class AppDelegate: NSObject, UIApplicationDelegate {
    let model = AppModel()

    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
    ) -> Bool {
        registerRefreshTask()
        application.registerForRemoteNotifications()   // background notifications need no permission prompt
        return true
    }

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        let model = self.model
        Task { await model.pushTokenArrived(deviceToken) }
    }

    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        // No token: the app still syncs while open, and from the refresh task.
    }

    /// Ferry's hint, read into a `Sendable` value here: `userInfo` itself may not cross to the engine in Swift 6. An
    /// alert (it carries `ferry` but no `seq`) and another sender's notification need no sync.
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]
    ) async -> UIBackgroundFetchResult {
        guard let notification = RemoteNotification(userInfo: userInfo) else { return .noData }
        return await model.handleRemoteNotification(notification)
    }

    /// Registers the refresh task at every launch, signed in or not (a scheduled task that launches an app which did
    /// not register it is an error). `BackgroundRefresh.register(identifier:engine:)` would need the engine now, which
    /// exists only while someone is signed in, and resumes neither a suspended shared store nor the suspended engine
    /// (whose sync it would wait for until its time is up); the model does all three.
    private func registerRefreshTask() {
        let model = self.model
        BGTaskScheduler.shared.register(forTaskWithIdentifier: NotesConfig.refreshTaskID, using: .main) { @Sendable task in
            let refresh = RefreshTask(task: task)
            Task { @MainActor in
                let work = Task { await model.backgroundRefresh() }
                refresh.task.expirationHandler = { @Sendable in work.cancel() }
                let success = await work.value
                refresh.task.setTaskCompleted(success: success)
            }
        }
    }
}

/// `BGTask` is not `Sendable`; Apple documents `setTaskCompleted(success:)` as callable from any thread.
private struct RefreshTask: @unchecked Sendable {
    let task: BGTask
}

/// The screen the model chose.
struct RootView: View {
    let model: AppModel

    var body: some View {
        Group {
            switch model.screen {
            case .launching:
                ProgressView()
            case .signIn:
                SignInView(model: model)
            case .offline(let reason):
                ContentUnavailableView {
                    Label("Cannot reach the server", systemImage: "wifi.slash")
                } description: {
                    Text(reason)
                } actions: {
                    Button("Try again") { Task { await model.launch() } }
                }
            case .notes:
                if let account = model.account {
                    NotesView(model: model, store: account.store, engine: account.engine)
                        .id(account.userID)
                }
            }
        }
        .task { await model.launch() }
    }
}
