import FerryCore
import Foundation
import Logging

/// Keeps a ``LocalStore`` in sync with the server: decides when to sync, runs one sync at a time, retries
/// failures with backoff, and publishes a ``SyncStatus``.
///
/// Triggers coalesce: at most one sync is in flight and at most one waits behind it. Triggers that arrive
/// before a sync begins join it (a short coalescing window gathers a launch's burst of triggers into one);
/// any number arriving while it runs produce exactly one follow-up. No trigger is dropped: one that
/// arrives while offline or backing off is kept until the sync it asked for has run.
///
/// ```swift
/// let engine = SyncEngine(store: store, remote: SyncClient(auth: auth))
/// Task { try await engine.run() }          // or add it to a ServiceGroup: `run()` is the whole service
/// await engine.trigger(.launch)
/// await engine.connectivityChanged(isReachable: path.status == .satisfied)   // every monitor callback
/// let report = try await engine.sync()     // manual: waits for a sync that covers this moment
/// ```
public actor SyncEngine {
    /// Timings and sizes of the engine.
    public struct Configuration: Sendable, Hashable {
        /// How often the periodic trigger fires; `nil` turns it off.
        public var periodicInterval: Duration? = .seconds(60)
        /// How long a local write waits for more writes before it triggers a push.
        public var localChangeDebounce: Duration = .milliseconds(300)
        /// How long a sync waits, once asked for, to gather the triggers fired with it (launch, foreground,
        /// connectivity). Manual syncs and debounced local changes skip it.
        public var coalescingWindow: Duration = .milliseconds(250)
        /// Delays between retries of failed syncs.
        public var backoff = BackoffPolicy()
        /// Mutations per push request: the server's largest (1000), since each push costs a request, a transaction and
        /// the rewrite of the device's replay fingerprints whatever its size (a smaller server limit halves it).
        public var pushBatchSize = 1000
        /// Changes per pull request (the server caps it at 5000).
        public var pullLimit = 1000
        /// Whether the engine keeps the server's realtime stream open while the app is active (when its remote
        /// offers one, as ``SyncClient`` does), so other devices' commits sync within moments.
        public var realtime = true
        /// How often to look for local writes made by other processes (an extension, another `ferry` command), which
        /// the store's observation cannot see; `nil` leaves it to ``LocalStore/noticeExternalChanges()``.
        public var externalWritesPollInterval: Duration?
        /// Delays between attempts to reopen a stream that failed to open or dropped before it was ready.
        public var realtimeBackoff = BackoffPolicy(initial: .milliseconds(500), maximum: .seconds(60))
        /// When the blobs that pulled records name are downloaded.
        public var blobDownloads = BlobDownloadPolicy()
        /// The bytes of a transfer's first blob upload request or download range, and of its smallest: 64 KiB to
        /// 64 MiB (4 MiB by default).
        ///
        /// Each chunk is one request, which must finish within the transport's timeout (30 s by default): 4 MiB
        /// needs about 1.1 Mbit/s. After each request the next is sized to what the measured rate moves in 2 s, at
        /// most four times the last, up to ``blobChunkSizeLimit``: on a fast network that is fewer round trips and
        /// fewer syncs to disk on the server (16 MiB uploaded 256 MiB 10–25 % faster than 4 MiB on a local server),
        /// and a slow one keeps this size.
        public var blobChunkSize = Self.defaultBlobChunkSize {
            didSet { blobChunkSize = Self.boundedChunk(blobChunkSize) }
        }
        /// ``blobChunkSize``'s default.
        public static let defaultBlobChunkSize = 4 << 20
        /// The largest a transfer's chunks grow to on a fast network: 64 KiB to 64 MiB (16 MiB by default), and never
        /// less than ``blobChunkSize`` (set it to that to keep every chunk the same).
        ///
        /// An upload holds one chunk in memory and a download two (the next range travels while one is written), and
        /// the HTTP transport keeps a copy of each while it moves: an app that must stay small (syncing in the
        /// background, say) lowers this. A proxy in front of the server must accept a request body of this size.
        public var blobChunkSizeLimit = 16 << 20 {
            didSet { blobChunkSizeLimit = Self.boundedChunk(blobChunkSizeLimit) }
        }

        /// The chunks of each blob transfer, from ``blobChunkSize`` up to ``blobChunkSizeLimit``.
        var blobChunks: BlobChunkPacer { BlobChunkPacer(chunkSize: blobChunkSize, limit: blobChunkSizeLimit) }

        private static func boundedChunk(_ bytes: Int) -> Int { min(max(bytes, 64 << 10), 64 << 20) }

        /// The most bytes the blob cache keeps: past it, the least recently used files the server holds are deleted
        /// after a sync (they download again on access). `nil`: no limit.
        public var blobCacheLimit: Int64?

        /// The defaults.
        public init() {}
    }

    /// The store this engine syncs.
    public nonisolated let store: LocalStore
    /// The engine's configuration.
    public nonisolated let configuration: Configuration
    /// The report of the last successful sync.
    public internal(set) var lastReport: SyncReport?
    /// What the last changes carried by a realtime poke and applied without a sync were (trigger `realtimeCarried`,
    /// no request); ``SyncStatus/lastStreamedAt`` tells when.
    public internal(set) var lastStreamedReport: SyncReport?
    /// How many syncs have started since the engine was created (successful or not).
    public internal(set) var startedSyncCount = 0

    let remote: any SyncRemote
    /// The realtime stream, when the remote offers one and the configuration wants it.
    let realtime: (any RealtimeRemote)?
    let encryption: EndToEndEncryption?
    let sleeper: any SyncSleeper
    let random: @Sendable () -> Double
    let logger: Logger
    let broadcast = Broadcast(SyncStatus(), buffering: .bufferingNewest(64))

    // Work the engine starts runs as child tasks of `run()`; before `run()` starts it waits here.
    var workSink: AsyncStream<Work>.Continuation?
    var pendingWork: [Work] = []
    var isRunning = false

    /// The sync in flight.
    var current: PassSlot?
    /// The sync asked for and not started yet (coalescing, backing off, offline, or behind the one in flight).
    var next: PassSlot?
    /// The timer that will start `next`: the coalescing window or a backoff delay.
    var timer: (token: Int, isBackoff: Bool)?
    var timerToken = 0
    var isDebouncing = false
    var isConnected: Bool?
    var consecutiveFailures = 0
    /// Whether the network is expensive now (``networkCostChanged(isExpensive:)``).
    var isNetworkExpensive = false
    var highestOutboxID: Int64?
    /// When the outbox was last counted, whether another count is asked for, and whether one is under way
    /// (``refreshPendingCount()``).
    var lastPendingCount: ContinuousClock.Instant?
    var isPendingCountScheduled = false
    var isCountingPending = false

    // The realtime stream.
    var isActive = true
    var streamConnection: Task<StreamClosure, any Error>?
    var isStreamReady = false
    var streamWake: CheckedContinuation<Void, Never>?

    // Stopping the sync in flight when the app is suspended (``suspend()``).
    var passTask: Task<SyncReport, any Error>?
    var isStoppingPass = false
    var isSuspended = false

    /// Creates an engine for `store` that talks to the server through `remote` (a ``SyncClient``).
    ///
    /// - Parameters:
    ///   - encryption: this device's key pair and the device routes, to read and write encrypted spaces; without it they stay locked.
    ///   - sleeper: the timers' clock; tests pass a manual one.
    ///   - random: the jitter source, in `0..<1`.
    ///   - logger: receives each sync's outcome; never field values or tokens.
    public init(
        store: LocalStore, remote: any SyncRemote, encryption: EndToEndEncryption? = nil, configuration: Configuration = Configuration(),
        sleeper: any SyncSleeper = ContinuousSleeper(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "ferry.sync")
    ) {
        self.store = store
        self.remote = remote
        self.realtime = configuration.realtime ? remote as? any RealtimeRemote : nil
        self.encryption = encryption
        self.configuration = configuration
        self.sleeper = sleeper
        self.random = random
        self.logger = logger
        broadcast.update { status in
            status.pendingCount = (try? store.pendingCount()) ?? 0
            status.lastSyncedAt = try? store.lastSyncedAt()
        }
    }

    /// The current status.
    public nonisolated var status: SyncStatus { broadcast.current ?? SyncStatus() }

    /// The current status, then every change, for as long as the stream is iterated.
    public nonisolated func statusUpdates() -> AsyncStream<SyncStatus> { broadcast.subscribe() }

    /// Every status from now on, none dropped however slow the reader (``SyncStatusModel``'s, which reads on the main actor).
    package nonisolated func everyStatusUpdate() -> AsyncStream<SyncStatus> { broadcast.subscribe(buffering: .unbounded) }

    /// Runs the engine until the task is cancelled: the periodic trigger, the outbox watch (local writes
    /// trigger a debounced push) and every sync and timer the triggers start.
    ///
    /// Triggers sent before `run()` starts are kept and acted on once it runs. Cancelling the task stops the
    /// sync in flight (its acknowledged work is kept); ``sync()`` callers still waiting get `CancellationError`.
    public func run() async throws {
        guard !isRunning else { return }
        isRunning = true
        let (work, sink) = AsyncStream.makeStream(of: Work.self)
        workSink = sink
        for item in pendingWork { sink.yield(item) }
        pendingWork = []
        if next != nil, current == nil, timer == nil {
            armTimer(after: configuration.coalescingWindow, isBackoff: false)
        }
        let periodic = configuration.periodicInterval
        await withDiscardingTaskGroup { group in
            if let periodic {
                group.addTask { await self.firePeriodically(every: periodic) }
            }
            group.addTask { await self.watchOutbox() }
            if let interval = configuration.externalWritesPollInterval {
                group.addTask { await self.pollExternalWrites(every: interval) }
            }
            if let realtime {
                group.addTask { await self.maintainStream(realtime) }
            }
            for await item in work {
                group.addTask { await item.operation() }
            }
            group.cancelAll()
        }
        workSink = nil
        isRunning = false
        timer = nil
        isDebouncing = false
        for waiter in (current?.waiters ?? []) + (next?.waiters ?? []) {
            waiter.resume(throwing: CancellationError())
        }
        current?.waiters = []
        next?.waiters = []
        try Task.checkCancellation()
    }

    /// Asks for a sync. Coalesces with every other trigger; never dropped.
    public func trigger(_ trigger: SyncTrigger) {
        switch trigger {
        case .localChange:
            guard !isDebouncing else { return }
            isDebouncing = true
            let debounce = configuration.localChangeDebounce
            spawn {
                do { try await self.sleeper.sleep(for: debounce) } catch { return }
                await self.debounceElapsed()
            }
        case .realtimePoke(let space, let seq):
            if let cursor = try? store.cursors()[space], cursor >= seq { return }
            request(trigger, immediately: true)  // latency matters; a burst still makes one sync and one follow-up
        case .manual:
            request(trigger, immediately: true)
        default:
            request(trigger, immediately: false)
        }
    }

    /// Feeds one connectivity report (every callback of a path monitor, the first included).
    ///
    /// The engine derives transitions itself: the first report only sets the state, and only a change from
    /// unreachable to reachable triggers ``SyncTrigger/connectivityRestored``.
    public func connectivityChanged(isReachable: Bool) {
        let previous = isConnected
        isConnected = isReachable
        streamConditionsChanged()
        guard let previous else {
            if !isReachable { publishIdlePhase() }
            return
        }
        guard previous != isReachable else { return }
        if isReachable {
            publishIdlePhase()
            request(.connectivityRestored, immediately: false)
        } else {
            publishIdlePhase()
        }
    }

    /// Tells the engine whether the app is active (in the foreground). The realtime stream stays open only while it
    /// is; an app calls this from its scene-phase or application-state callbacks. Active by default.
    public func activityChanged(isActive: Bool) {
        self.isActive = isActive
        streamConditionsChanged()
    }

    /// Syncs now (or joins the sync about to begin) and returns its report; when a sync is already running,
    /// waits for the follow-up, so the result covers every write made before the call.
    ///
    /// Cancelling the calling task stops the waiting (with `CancellationError`), not the sync, which others may share.
    ///
    /// - Throws: ``SyncError`` when the sync fails; `CancellationError` when the engine stops first or the caller is
    ///   cancelled.
    @discardableResult
    public func sync() async throws -> SyncReport {
        let waiter = SyncWaiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.attach(continuation) else { return }
                if current?.hasBegun == false {
                    current?.waiters.append(waiter)
                } else {
                    if next == nil { next = PassSlot() }
                    next?.waiters.append(waiter)
                }
                request(.manual, immediately: true)
            }
        } onCancel: {
            waiter.resume(throwing: CancellationError())
        }
    }
}

extension SyncEngine {
    /// One operation run as a child task of ``run()``.
    struct Work: Sendable {
        let operation: @Sendable () async -> Void
    }

    /// A sync asked for: why, and who waits for its report.
    struct PassSlot {
        var triggers: [SyncTrigger] = []
        var waiters: [SyncWaiter] = []
        var hasBegun = false
    }
}
