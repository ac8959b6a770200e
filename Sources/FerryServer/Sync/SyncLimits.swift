/// The limits the sync endpoints enforce, so one client cannot exhaust the server.
public struct SyncLimits: Sendable, Hashable {
    /// The largest push body.
    public var maximumPushBytes = 16 * 1024 * 1024
    /// The most mutations in one push.
    public var maximumBatchLength = 1000
    /// How many pushes a device may have on the wire at once (``PushResponse/maxInFlight``), each after the first
    /// naming the one it follows: the next pushes cross the network and are decoded while the last one commits.
    /// 1 has devices wait for each reply. Each device's fingerprints are kept for the pushes of one more than 3
    /// (``ProcessedBatch/capacity``): a larger setting only risks a replay answered stale, then renumbered.
    public var maximumPushesInFlight = 3
    /// The largest record, measured as the JSON of its fields.
    public var maximumRecordBytes = 256 * 1024
    /// The longest unique key, as the JSON of its fields' values: every value must fit an index entry on both engines.
    public var maximumUniqueKeyBytes = 1024
    /// The changes a pull returns when the client names no limit.
    public var defaultPullLimit = 1000
    /// The most changes one pull returns.
    public var maximumPullLimit = 5000
    /// About the most bytes of changes one pull returns (always at least one change, which is at most
    /// ``maximumRecordBytes`` of fields), so a page's size does not grow with `limit` × record size.
    public var maximumPullBytes = 4 * 1024 * 1024
    /// How many pull pages the server may hold read ahead for clients paging through a pull (docs/sync.md,
    /// "Read-ahead"), each up to ``maximumPullBytes``; 0 reads every page only when asked.
    public var maximumPagesReadAhead = 16
    /// How far ahead of the server's clock a device's clock may run; later clocks are lowered to this bound,
    /// so a device with a wrong clock cannot win every merge forever.
    public var maximumClockSkew: Duration = .seconds(60)
    /// How long tombstones are kept before garbage collection; a device offline longer must resync.
    public var tombstoneRetention: Duration = .seconds(30 * 24 * 3600)

    /// The most sealed keys in one `PUT /sync/v1/secrets`.
    public var maximumSecretsBatchLength = 1000
    /// The largest `PUT /sync/v1/secrets` body (a row is about 250 bytes of JSON).
    public var maximumSecretsBytes = 1024 * 1024
    /// How often a device's `lastSeenAt` is written at most: every request of a bound session would otherwise be a
    /// write, and SQLite has one writer. `GET /sync/v1/devices` is therefore up to this much behind.
    public var lastSeenInterval: Duration = .seconds(10)
    /// How long a pull's session context (its session, device and spaces) is kept in memory at most, so that a pull
    /// with nothing new reads no database; events keep it current (docs/sync.md, "No-op pulls"). Zero reads each
    /// pull's context from the database.
    public var sessionCacheLifetime: Duration = .seconds(30)
    /// The most sessions whose context is kept in memory (about 1 KiB each with a few spaces, more for accounts in
    /// many spaces).
    public var sessionCacheCapacity = 100_000

    /// The most spaces one account is in (its personal space included): creating or joining one more is
    /// `409 too_many_spaces`. Every push and pull reads each of them.
    public var maximumSpacesPerAccount = 1000
    /// The most devices one account has registered and not revoked: one more is `409 too_many_devices`.
    public var maximumDevicesPerAccount = 100
    /// The most invitations one account has pending (neither redeemed, revoked nor expired): one more is
    /// `409 too_many_invitations`.
    public var maximumPendingInvitations = 100
    /// How long an invitation's code works when the inviter names no `expiresIn`.
    public var invitationLifetime: Duration = .seconds(7 * 24 * 3600)
    /// The longest `expiresIn` an inviter may ask for.
    public var maximumInvitationLifetime: Duration = .seconds(30 * 24 * 3600)

    /// The default limits.
    public init() {}
}
