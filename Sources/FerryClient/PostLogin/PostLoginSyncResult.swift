import FerryCore

/// What a ``PostLoginSync`` did, and what it skipped.
///
/// Skipped items were logged and left for the next sync, which retries them. A run that could not reach the
/// server at all has a ``failure``: the app can offer to "continue anyway" (everything stays on the device and
/// syncs later).
public struct PostLoginSyncResult: Sendable, Hashable {
    /// One item a step skipped.
    public struct Skipped: Sendable, Hashable {
        /// The step.
        public var phase: PostLoginProgress.Phase
        /// What was skipped ("this device", "notes 6f1c…", "key v2 of space … for device …").
        public var item: String
        /// A stable machine code.
        public var code: String
        /// A message a person can act on.
        public var message: String

        /// Creates an entry.
        public init(phase: PostLoginProgress.Phase, item: String, code: String, message: String) {
            self.phase = phase
            self.item = item
            self.code = code
            self.message = message
        }
    }

    /// The step that stopped the run, why, and a message.
    public struct Failure: Sendable, Hashable {
        /// The step.
        public var phase: PostLoginProgress.Phase
        /// A stable machine code (`network_unavailable`, …).
        public var code: String
        /// A message a person can act on.
        public var message: String
    }

    /// This device as the server has it, or `nil` when registering it failed.
    public var device: Device?
    /// The account's devices, when they could be fetched.
    public var devices: [Device] = []
    /// Local changes uploaded.
    public var pushed = 0
    /// Changes pulled and rows they changed.
    public var pulled = 0
    /// Local rows the pulled changes changed.
    public var applied = 0
    /// Space keys sealed to other devices or made.
    public var sealedKeys = 0
    /// Requests made.
    public var requests = 0
    /// Items skipped; the next sync retries them.
    public var skipped: [Skipped] = []
    /// The step that could not run at all, if any.
    public var failure: Failure?

    /// Whether every step ran and nothing was skipped.
    public var isComplete: Bool { failure == nil && skipped.isEmpty }
    /// Whether the run stopped early: offer the person to continue without a full sync.
    public var canContinueAnyway: Bool { failure != nil }
}
