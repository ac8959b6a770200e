import FerryCore
import Foundation
import Logging

/// The rules of spaces: creating them, inviting with codes, redeeming, leaving, removing and changing roles.
///
/// Nobody becomes a member without consent: an invitation is a single-use, expiring code that only an account with
/// the invited address can redeem, and signing up grants nothing. Storage reads each decision's inputs and applies it
/// in one transaction; the rules live here.
struct SpaceService: Sendable {
    let storage: any SyncService.Storage
    let limits: SyncLimits
    let logger: Logger
    /// Tells open streams when an account's spaces change.
    let events: any RealtimeFeed
    var now: @Sendable () -> Date = Date.init

    func spaces(_ caller: SyncCaller) async throws -> [SpaceSummary] {
        try await storage.spaces(userID: caller.userID)
    }

    func createSpace(_ caller: SyncCaller, request: CreateSpaceRequest) async throws -> SpaceSummary {
        let name = request.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.fits(characters: 1...200), !name.containsControlCharacter else {
            throw ServiceError(.unprocessable, .validationFailed, "A space needs a name of 1 to 200 characters (at most 800 bytes of UTF-8), without control characters.")
        }
        let id = request.id ?? UUID()
        do {
            try await storage.createSpace(
                id: id, name: name, isEncrypted: request.encrypted ?? false, ownerID: caller.userID, now: now(),
                maximumSpaces: limits.maximumSpacesPerAccount
            )
        } catch SpaceStorageError.spaceExists {
            throw ServiceError(.conflict, .spaceExists, "A space with id \(id.lowercasedText) exists already.")
        } catch SpaceStorageError.tooManySpaces {
            throw Self.tooManySpaces(limits)
        }
        await events.publish([.accountChanged(caller.userID)])
        return SpaceSummary(id: id, name: name, isPersonal: false, isEncrypted: request.encrypted ?? false, role: .owner, seq: 0)
    }

    /// Creates an invitation and returns it with its code, which is never shown again.
    func invite(_ caller: SyncCaller, space: UUID, request: InviteRequest) async throws -> SpaceInvitation {
        let summary = try await manageable(caller, space: space)
        guard request.role != .owner else {
            throw ServiceError(.unprocessable, .validationFailed, "Invite as admin, member or viewer; an owner makes a member owner afterwards.")
        }
        let email: String
        do {
            email = try AuthService.validEmail(request.email)
        } catch {
            throw ServiceError(.unprocessable, .emailAddressInvalid, "email is not an email address.")
        }
        let longest = Int(limits.maximumInvitationLifetime.timeInterval)
        if let asked = request.expiresIn, !(60...longest).contains(asked) {
            throw ServiceError(.unprocessable, .validationFailed, "expiresIn is in seconds, from 60 to \(longest).")
        }
        let lifetime = request.expiresIn.map(TimeInterval.init) ?? limits.invitationLifetime.timeInterval
        let time = now()
        let code = InvitationCode.generate()
        var invitation = SpaceInvitation(
            id: UUID(), spaceId: summary.id, email: email, role: request.role, invitedBy: caller.userID, createdAt: time,
            expiresAt: time.addingTimeInterval(lifetime)
        )
        do {
            try await storage.createInvitation(invitation, codeHash: code.hash, maximumPending: limits.maximumPendingInvitations, now: time)
        } catch SpaceStorageError.tooManyInvitations {
            throw ServiceError(.conflict, .tooManyInvitations,
                "You have \(limits.maximumPendingInvitations) pending invitations, the most this server allows; revoke some or wait until they are redeemed or expire."
            )
        }
        invitation.code = code.text
        return invitation
    }

    /// The space's pending invitations, for its owners and admins.
    func invitations(_ caller: SyncCaller, space: UUID) async throws -> [SpaceInvitation] {
        _ = try await manageable(caller, space: space)
        return try await storage.invitations(space: space, now: now())
    }

    func revokeInvitation(_ caller: SyncCaller, space: UUID, invitation: UUID) async throws {
        _ = try await manageable(caller, space: space)
        guard try await storage.revokeInvitation(space: space, id: invitation, now: now()) else {
            throw ServiceError(.notFound, .invitationNotFound, "No pending invitation \(invitation.lowercasedText) in this space.")
        }
    }

    /// Redeems a code: the caller joins its space with its role (keeping a role with more rights it already has).
    func accept(_ caller: SyncCaller, request: AcceptInvitationRequest) async throws -> SpaceSummary {
        guard let code = InvitationCode(typed: request.code) else { throw Self.unknownCode }
        let (userID, limits, time) = (caller.userID, limits, now())
        let space: UUID
        do {
            space = try await storage.redeemInvitation(codeHash: code.hash, userID: userID, now: time) { context in
                try Self.decide(context, userID: userID, limits: limits, now: time)
            }
        } catch SpaceStorageError.spaceNotFound {
            throw Self.unknownCode
        }
        logger.info("invitation redeemed", metadata: ["ferry.space.id": "\(space.lowercasedText)"])
        await events.publish([.accountChanged(userID)])
        guard let summary = try await storage.spaces(userID: userID).first(where: { $0.id == space }) else {
            throw Self.unknownCode
        }
        return summary
    }

    /// Removes a member; a member removes themselves to leave.
    func remove(_ caller: SyncCaller, space: UUID, member: UUID) async throws {
        let callerID = caller.userID
        _ = try await storage.changeMember(space: space, callerID: callerID, memberID: member, now: now()) { context in
            try Self.decide(context, space: space, callerID: callerID, memberID: member, change: .remove)
        }
        await events.publish([.accountChanged(member)])
    }

    func changeRole(_ caller: SyncCaller, space: UUID, member: UUID, request: ChangeRoleRequest) async throws -> SpaceMember {
        let callerID = caller.userID
        let changed = try await storage.changeMember(space: space, callerID: callerID, memberID: member, now: now()) { context in
            try Self.decide(context, space: space, callerID: callerID, memberID: member, change: .setRole(request.role))
        }
        await events.publish([.accountChanged(member)])
        guard let changed else { throw Self.memberNotFound(member) }
        return changed
    }

    func members(_ caller: SyncCaller, space: UUID) async throws -> [SpaceMember] {
        _ = try await membership(caller, space: space)
        return try await storage.members(space: space)
    }

    // MARK: The rules

    /// Whether a redemption joins, and with which role.
    static func decide(_ context: RedemptionContext, userID: UUID, limits: SyncLimits, now: Date) throws -> RedemptionDecision {
        // An unknown, revoked or misaddressed code gets one answer: a code's holder learns nothing about other invitations.
        guard let stored = context.invitation, stored.revokedAt == nil,
              stored.invitation.email == context.email.lowercased() else { throw unknownCode }
        if let acceptedAt = stored.acceptedAt {
            // A retry after a lost reply by the same account is answered as the first redemption was.
            guard stored.acceptedBy == userID, context.currentRole != nil else {
                throw ServiceError(.conflict, .invitationUsed, "This invitation was redeemed at \(Timestamp.format(acceptedAt)); ask for a new one.")
            }
            return .alreadyRedeemed
        }
        guard stored.invitation.expiresAt > now else {
            throw ServiceError(.gone, .invitationExpired, "This invitation expired at \(Timestamp.format(stored.invitation.expiresAt)); ask for a new one.")
        }
        guard let current = context.currentRole else {
            guard context.spaceCount < limits.maximumSpacesPerAccount else { throw tooManySpaces(limits) }
            return .join(stored.invitation.role)
        }
        return .join(min(current, stored.invitation.role))
    }

    /// Whether a removal or a role change happens. Owners manage everyone; admins manage admins, members and viewers;
    /// anyone may leave; a space always keeps an owner.
    static func decide(
        _ context: MembershipContext, space: UUID, callerID: UUID, memberID: UUID, change: MembershipChange
    ) throws -> MembershipChange {
        guard let callerRole = context.callerRole else {
            throw ServiceError(.notFound, .spaceNotFound, "No space \(space.lowercasedText) among yours.")
        }
        guard !context.isPersonal else {
            throw ServiceError(.unprocessable, .validationFailed, "A personal space has exactly one member, its owner.")
        }
        guard let memberRole = context.memberRole else { throw memberNotFound(memberID) }
        let isSelfLeaving = callerID == memberID && change == .remove
        if !isSelfLeaving {
            guard callerRole.canManageMembers else {
                throw ServiceError(.forbidden, .insufficientRole, "Your role in this space is \(callerRole.rawValue); only owners and admins manage members.")
            }
            if callerRole != .owner && (memberRole == .owner || change == .setRole(.owner)) {
                throw ServiceError(.forbidden, .insufficientRole, "Only an owner changes or removes an owner, or makes one.")
            }
        }
        let losesOwner = memberRole == .owner && change != .setRole(.owner)
        if losesOwner && context.ownerCount == 1 {
            throw ServiceError(.conflict, .lastOwner,
                "This is the space's only owner; make another member owner first (PATCH …/members/{user} with role owner)."
            )
        }
        if case .setRole(let role) = change, role == memberRole { return .nothing }
        return change
    }

    // MARK: Helpers

    private func membership(_ caller: SyncCaller, space: UUID) async throws -> SpaceSummary {
        guard let summary = try await storage.spaces(userID: caller.userID).first(where: { $0.id == space }) else {
            throw ServiceError(.notFound, .spaceNotFound, "No space \(space.lowercasedText) among yours.")
        }
        return summary
    }

    /// The caller's membership of a shared space they manage.
    private func manageable(_ caller: SyncCaller, space: UUID) async throws -> SpaceSummary {
        let summary = try await membership(caller, space: space)
        guard summary.role.canManageMembers else {
            throw ServiceError(.forbidden, .insufficientRole, "Your role in this space is \(summary.role.rawValue); only owners and admins manage invitations.")
        }
        guard !summary.isPersonal else {
            throw ServiceError(.unprocessable, .validationFailed, "A personal space cannot be shared; create a shared space.")
        }
        return summary
    }

    static let unknownCode = ServiceError(.notFound, .invitationNotFound,
        "No pending invitation has this code for your address: check the code, and that you are signed in with the address it was sent to."
    )

    static func memberNotFound(_ member: UUID) -> ServiceError {
        ServiceError(.notFound, .memberNotFound, "No member \(member.lowercasedText) in this space.")
    }

    static func tooManySpaces(_ limits: SyncLimits) -> ServiceError {
        ServiceError(.conflict, .tooManySpaces, "You are in \(limits.maximumSpacesPerAccount) spaces, the most this server allows; leave one first.")
    }
}
