import Foundation

/// One snapshot of the sync state, for a status bar or a progress view.
public struct SyncStatus: Sendable, Hashable {
    /// What the engine is doing.
    public enum Phase: String, Sendable, Hashable, Codable {
        /// Nothing to do, or waiting for the next trigger.
        case idle
        /// Sending local writes.
        case pushing
        /// Fetching and applying changes.
        case pulling
        /// The last sync failed temporarily; the engine retries after a delay.
        case backingOff
        /// The network is down; triggers wait for it to come back.
        case offline
    }

    /// The current phase.
    public var phase: Phase = .idle
    /// Progress of the sync in flight, `nil` when none runs.
    public var progress: SyncProgress?
    /// Local writes waiting for the server. Counting scans the outbox, so while writes or acknowledgements follow each
    /// other it is refreshed at most four times a second, and always once after the last of them.
    public var pendingCount = 0
    /// When the last sync finished successfully.
    public var lastSyncedAt: Date?
    /// When changes a realtime poke carried were last applied: they apply as they arrive, without a sync, when they
    /// follow on from what the device holds.
    public var lastStreamedAt: Date?
    /// Why the last sync failed; `nil` once a sync succeeds.
    public var lastError: SyncError?
    /// The realtime stream's state.
    public var realtime: RealtimeState = .off

    /// Creates a status.
    public init(phase: Phase = .idle, progress: SyncProgress? = nil, pendingCount: Int = 0, lastSyncedAt: Date? = nil, lastError: SyncError? = nil) {
        self.phase = phase
        self.progress = progress
        self.pendingCount = pendingCount
        self.lastSyncedAt = lastSyncedAt
        self.lastError = lastError
    }

    /// Whether a sync is pushing or pulling right now.
    public var isSynchronizing: Bool { phase == .pushing || phase == .pulling }
    /// Whether a sync ever succeeded on this device.
    public var hasSynced: Bool { lastSyncedAt != nil }
}

/// The state of the engine's realtime stream (`GET /sync/v1/stream`).
public enum RealtimeState: String, Sendable, Hashable, Codable {
    /// No stream: realtime is turned off, the app is inactive, the network is down, or the engine is not running.
    case off
    /// Opening the stream.
    case connecting
    /// Open: commits on other devices trigger a sync within moments.
    case connected
    /// Lost or refused; the engine reconnects after a backoff delay. Periodic and local triggers still sync.
    case disconnected
}

/// How far the sync in flight has come.
public struct SyncProgress: Sendable, Hashable {
    /// Mutations pushed so far.
    public var pushed: Int
    /// Mutations to push in total (as counted when the sync started).
    public var pushTotal: Int
    /// Changes pulled so far (the total is unknown until the server says it has no more).
    public var pulled: Int
    /// The files moving now (uploads before the push, downloads after the pull), `nil` when none.
    public var blobs: BlobProgress?

    /// Creates a progress value.
    public init(pushed: Int = 0, pushTotal: Int = 0, pulled: Int = 0) {
        self.pushed = pushed
        self.pushTotal = pushTotal
        self.pulled = pulled
    }
}
