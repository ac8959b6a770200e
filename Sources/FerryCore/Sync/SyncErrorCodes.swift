extension ErrorCode {
    // Sync codes: whole-request errors and per-mutation rejections.

    /// The collection is not in the server's schema.
    public static let unknownCollection: ErrorCode = "unknown_collection"
    /// A field is not declared in the collection.
    public static let unknownField: ErrorCode = "unknown_field"
    /// A value does not fit its field's type.
    public static let typeMismatch: ErrorCode = "type_mismatch"
    /// The user may not write (or read) this space.
    public static let forbiddenSpace: ErrorCode = "forbidden_space"
    /// The record is larger than the server accepts.
    public static let recordTooLarge: ErrorCode = "record_too_large"
    /// A child names a parent that does not exist (or is deleted).
    public static let parentMissing: ErrorCode = "parent_missing"
    /// The record exists in another space; a record never moves between spaces.
    public static let spaceMismatch: ErrorCode = "space_mismatch"
    /// The write would duplicate a unique key within the space.
    public static let uniqueViolation: ErrorCode = "unique_violation"
    /// A clock is missing or malformed.
    public static let invalidClock: ErrorCode = "invalid_clock"
    /// A mutation breaks a rule of a system collection (say, a profile id that is not the user's).
    public static let invalidRecord: ErrorCode = "invalid_record"
    /// The batch has more mutations than the server accepts in one push.
    public static let batchTooLarge: ErrorCode = "batch_too_large"
    /// Mutation ids in a batch are not strictly increasing.
    public static let mutationOrder: ErrorCode = "mutation_out_of_order"
    /// A push reuses a mutation id the server processed for a different write (the device's store was reset or
    /// restored): nothing changed; the body's `last_mutation_id` is the device's last processed id, and the device
    /// numbers its waiting writes after it and pushes again.
    public static let mutationIDStale: ErrorCode = "mutation_id_stale"
    /// A push names in `follows` a mutation id that is not the last one the server processed for the device: the push it
    /// was sent behind has not committed (it is still running, or failed), or another came in between. Nothing
    /// changed; the device sends it again once that push is answered.
    public static let pushOutOfOrder: ErrorCode = "push_out_of_order"
    /// A push names a device other than the one its session is bound to.
    public static let deviceMismatch: ErrorCode = "device_mismatch"
    /// A value of a unique field is too long to index (the per-mutation code; see `SyncLimits.maximumUniqueValueBytes`).
    public static let uniqueValueTooLong: ErrorCode = "unique_value_too_long"
    /// The space does not exist or the caller is not a member.
    public static let spaceNotFound: ErrorCode = "space_not_found"
    /// A space with this id exists.
    public static let spaceExists: ErrorCode = "space_exists"
    /// The caller's role does not allow this.
    public static let insufficientRole: ErrorCode = "insufficient_role"
}

extension ErrorCode {
    // Invitations, membership and per-account caps.

    /// No pending invitation has this code (unknown, revoked, or sent to another address).
    public static let invitationNotFound: ErrorCode = "invitation_not_found"
    /// The invitation's code expired; ask for a new one.
    public static let invitationExpired: ErrorCode = "invitation_expired"
    /// The invitation's code was redeemed by another account.
    public static let invitationUsed: ErrorCode = "invitation_used"
    /// The space's last owner can neither leave, be removed, nor lose the owner role.
    public static let lastOwner: ErrorCode = "last_owner"
    /// The account is in as many spaces as the server allows.
    public static let tooManySpaces: ErrorCode = "too_many_spaces"
    /// The account has as many devices as the server allows.
    public static let tooManyDevices: ErrorCode = "too_many_devices"
    /// The account has as many pending invitations out as the server allows.
    public static let tooManyInvitations: ErrorCode = "too_many_invitations"
    /// No member with this id in the space.
    public static let memberNotFound: ErrorCode = "member_not_found"
}

extension ErrorCode {
    // The realtime stream.

    /// `GET /sync/v1/stream` was called without a WebSocket upgrade.
    public static let upgradeRequired: ErrorCode = "upgrade_required"
    /// The account (429) or the server (503) holds as many open streams as allowed; retry later.
    public static let tooManyStreams: ErrorCode = "too_many_streams"
}
