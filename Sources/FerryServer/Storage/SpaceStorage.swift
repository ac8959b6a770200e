import FerryCore
import Foundation

/// Why a space operation failed.
public enum SpaceStorageError: Error, Sendable, Hashable {
    /// A space with this id exists already.
    case spaceExists
    /// No such space.
    case spaceNotFound
    /// The account is in ``SyncLimits/maximumSpacesPerAccount`` spaces already.
    case tooManySpaces
    /// The inviter has ``SyncLimits/maximumPendingInvitations`` pending invitations out already.
    case tooManyInvitations
}

/// An invitation as stored: the wire form and what became of it.
struct StoredInvitation: Sendable, Hashable {
    var invitation: SpaceInvitation
    /// When it was redeemed, and by whom (`nil` once that account is deleted).
    var acceptedAt: Date?
    var acceptedBy: UUID?
    /// When an owner or admin revoked it.
    var revokedAt: Date?
}

/// What a redemption found, read inside its transaction.
struct RedemptionContext: Sendable {
    /// The invitation with the code's hash, if any.
    var invitation: StoredInvitation?
    /// The redeeming account's email, as stored now.
    var email: String
    /// The account's role in the invitation's space, when it is a member already.
    var currentRole: SpaceRole?
    /// How many spaces the account is in.
    var spaceCount: Int
}

/// What a redemption does: join the space with a role (marking the code used), or nothing (the caller redeemed it before).
enum RedemptionDecision: Sendable, Hashable {
    case join(SpaceRole)
    case alreadyRedeemed
}

/// What a membership change found, read inside its transaction.
struct MembershipContext: Sendable {
    /// The caller's role in the space; `nil` when the caller is not a member (or the space does not exist).
    var callerRole: SpaceRole?
    /// The member's role; `nil` when they are not a member.
    var memberRole: SpaceRole?
    /// How many owners the space has.
    var ownerCount: Int
    var isPersonal: Bool
}

/// What a membership change does.
enum MembershipChange: Sendable, Hashable {
    case remove
    case setRole(SpaceRole)
    case nothing
}

/// Spaces, members and invitations. Rules live in ``SyncService``; storage reads their inputs and applies their
/// decision in one transaction, so two concurrent changes cannot both pass a check (say, two owners each leaving).
protocol SpaceStorage: Sendable {
    /// The spaces `userID` belongs to.
    func spaces(userID: UUID) async throws -> [SpaceSummary]
    /// Creates a shared space owned by `ownerID`. Throws ``SpaceStorageError/spaceExists`` or, when the owner is in
    /// `maximumSpaces` spaces already, ``SpaceStorageError/tooManySpaces``.
    func createSpace(id: UUID, name: String, isEncrypted: Bool, ownerID: UUID, now: Date, maximumSpaces: Int) async throws
    /// Stores an invitation under the hash of its code. Throws ``SpaceStorageError/tooManyInvitations`` when its sender
    /// has `maximumPending` invitations pending at `now`.
    func createInvitation(_ invitation: SpaceInvitation, codeHash: Data, maximumPending: Int, now: Date) async throws
    /// The space's invitations still pending at `now` (neither redeemed, revoked nor expired), oldest first.
    func invitations(space: UUID, now: Date) async throws -> [SpaceInvitation]
    /// Revokes a pending invitation of `space`; `false` when there is none with this id.
    func revokeInvitation(space: UUID, id: UUID, now: Date) async throws -> Bool
    /// Reads the redemption's context and applies what `decide` returns, in one transaction; returns the space id.
    /// `decide` throws to refuse, changing nothing.
    func redeemInvitation(
        codeHash: Data, userID: UUID, now: Date, decide: @Sendable (RedemptionContext) throws -> RedemptionDecision
    ) async throws -> UUID
    /// Reads the change's context and applies what `decide` returns, in one transaction. Removing a member of an
    /// encrypted space that has a key flags the space for rotation: the member's devices may hold its key. A member
    /// removed, or left without the right to invite, loses the pending invitations they sent into the space.
    /// Returns the member afterwards (`nil` when removed).
    func changeMember(
        space: UUID, callerID: UUID, memberID: UUID, now: Date, decide: @Sendable (MembershipContext) throws -> MembershipChange
    ) async throws -> SpaceMember?
    /// The members of a space.
    func members(space: UUID) async throws -> [SpaceMember]
}
