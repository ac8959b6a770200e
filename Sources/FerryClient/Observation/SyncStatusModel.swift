import Foundation
import Observation

/// A ``SyncEngine``'s status for SwiftUI: ``status`` follows ``SyncEngine/statusUpdates()`` on the main actor, so a
/// status bar, a spinner or an "unsent" badge reads it and redraws when it changes.
///
/// ```swift
/// @State private var sync = SyncStatusModel(engine: engine)
///
/// var body: some View {
///     Label(sync.pendingCount > 0 ? "\(sync.pendingCount) unsent" : "Up to date",
///           systemImage: sync.isSynchronizing ? "arrow.triangle.2.circlepath" : "checkmark.icloud")
/// }
/// ```
///
/// The model follows the engine from its creation until ``stop()`` or until it is released. It assigns every status
/// the engine publishes, in order, on the main actor: its subscription buffers without limit, so a busy main actor
/// delays statuses but never loses one.
@Observable
@MainActor
public final class SyncStatusModel {
    /// The engine's latest status, as delivered on the main actor.
    public private(set) var status: SyncStatus
    /// How many statuses the model has assigned since it was created: the engine's current status each time the model
    /// (re)subscribes, then one per change. Lets a test check that none was skipped.
    public private(set) var updateCount = 0

    /// The engine the model follows: call ``SyncEngine/sync()`` on it from a pull-to-refresh.
    public let engine: SyncEngine

    /// Whether a task follows the engine now.
    @ObservationIgnored private var isRunning = false
    /// Not on the main actor, so that `deinit` can cancel the task.
    private nonisolated let observing = ObservationTask()

    /// What the engine is doing (``SyncStatus/phase``).
    public var phase: SyncStatus.Phase { status.phase }
    /// Local writes waiting for the server (``SyncStatus/pendingCount``).
    public var pendingCount: Int { status.pendingCount }
    /// Whether a sync is pushing or pulling now, for a spinner (``SyncStatus/isSynchronizing``).
    public var isSynchronizing: Bool { status.isSynchronizing }
    /// How far the sync in flight has come, `nil` when none runs (``SyncStatus/progress``).
    public var progress: SyncProgress? { status.progress }
    /// When the last sync succeeded, `nil` before the first (``SyncStatus/lastSyncedAt``).
    public var lastSyncedAt: Date? { status.lastSyncedAt }
    /// Why the last sync failed, `nil` once one succeeds (``SyncStatus/lastError``).
    public var lastError: SyncError? { status.lastError }
    /// The realtime stream's state (``SyncStatus/realtime``).
    public var realtime: RealtimeState { status.realtime }

    /// Creates the model with the engine's current status and starts following it.
    public init(engine: SyncEngine) {
        self.engine = engine
        status = engine.status
        start()
    }

    deinit {
        observing.cancel()
    }

    /// Follows the engine again after ``stop()``; does nothing while the model follows it.
    ///
    /// Subscribes at once, so no status published after this call is missed, even before the task first runs.
    public func start() {
        guard !isRunning else { return }
        isRunning = true
        let updates = engine.everyStatusUpdate()
        observing.replace(with: Task { @MainActor [weak self] in
            for await status in updates {
                guard !Task.isCancelled, let self else { return }
                self.receive(status)
            }
            guard !Task.isCancelled, let self else { return }
            self.isRunning = false
        })
    }

    /// Stops following the engine: ``status`` keeps its last value. Releasing the model stops it too.
    public func stop() {
        isRunning = false
        observing.cancel()
    }

    private func receive(_ status: SyncStatus) {
        self.status = status
        updateCount += 1
    }
}
