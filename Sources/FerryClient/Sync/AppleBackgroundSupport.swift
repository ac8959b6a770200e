#if canImport(UIKit) && canImport(BackgroundTasks)
import BackgroundTasks
import UIKit

// The Apple-only shells around ``SyncEngine/backgroundSync(deadline:)`` and
// ``SyncEngine/handleRemoteNotification(_:timeLimit:)``, whose logic is tested on Linux. Kept thin on purpose: each
// only maps a system callback to the engine and back.

extension BackgroundSyncResult {
    /// The answer for `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    public var fetchResult: UIBackgroundFetchResult {
        switch self {
        case .completed(let report): report.applied > 0 ? .newData : .noData
        case .stoppedAtDeadline: .noData
        case .failed: .failed
        }
    }
}

/// A `BGAppRefreshTask` that syncs: register it once while the app launches, schedule it when the app goes to the
/// background. Its identifier must be listed under `BGTaskSchedulerPermittedIdentifiers` in `Info.plist`.
public enum BackgroundRefresh {
    /// Registers the task; call it before `application(_:didFinishLaunchingWithOptions:)` returns.
    ///
    /// Each run schedules the next one, syncs within 25 seconds (iOS allows about 30), and, when iOS ends the time
    /// early, its expiration handler cancels the sync, which stops between transactions with nothing lost.
    public static func register(identifier: String, engine: SyncEngine, every interval: TimeInterval = 15 * 60) {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            schedule(identifier: identifier, after: interval)
            let handle = SystemTask(task)
            let sync = Task {
                let result = await engine.backgroundSync(timeLimit: .seconds(25))
                handle.task.setTaskCompleted(success: result != .stoppedAtDeadline && result.fetchResult != .failed)
            }
            task.expirationHandler = { sync.cancel() }
        }
    }

    /// Carries the system's task into the sync's task: Apple documents `setTaskCompleted(success:)` as callable from
    /// any thread, but the SDK does not mark `BGTask` `Sendable`.
    private struct SystemTask: @unchecked Sendable {
        let task: BGTask
        init(_ task: BGTask) { self.task = task }
    }

    /// Asks iOS to run the task again no earlier than `interval` from now.
    public static func schedule(identifier: String, after interval: TimeInterval) {
        let request = BGAppRefreshTaskRequest(identifier: identifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: interval)
        try? BGTaskScheduler.shared.submit(request)
    }
}
#endif
