import FerryCore
import Foundation

extension SyncClient {
    private struct MemberList: Decodable { var members: [SpaceMember] }
    private struct InvitationList: Decodable { var invitations: [SpaceInvitation] }

    private func spacePath(_ space: UUID, _ rest: String) -> String {
        "sync/v1/spaces/\(space.lowercasedText)/\(rest)"
    }

    /// Invites `request.email` into `space` with `request.role`: the reply holds the invitation's single-use `code`,
    /// which the invitee redeems with ``acceptInvitation(code:)``. The server never shows the code again.
    public func invite(_ request: InviteRequest, to space: UUID) async throws -> SpaceInvitation {
        try await send("POST", spacePath(space, "invitations"), body: request, expecting: SpaceInvitation.self, what: "invitation")
    }

    /// The pending invitations of `space` (owners and admins), without their codes.
    public func invitations(of space: UUID) async throws -> [SpaceInvitation] {
        try await send("GET", spacePath(space, "invitations"), expecting: InvitationList.self, what: "invitation list").invitations
    }

    /// Revokes a pending invitation: its code stops working.
    public func revokeInvitation(_ invitation: UUID, in space: UUID) async throws {
        _ = try await send("DELETE", spacePath(space, "invitations/\(invitation.lowercasedText)"), expecting: Empty.self, what: "reply")
    }

    /// Redeems an invitation code; the account joins its space, which is returned.
    public func acceptInvitation(code: String) async throws -> SpaceSummary {
        try await send("POST", "sync/v1/invitations/accept", body: AcceptInvitationRequest(code: code), expecting: SpaceSummary.self, what: "space")
    }

    /// The members of `space`.
    public func members(of space: UUID) async throws -> [SpaceMember] {
        try await send("GET", spacePath(space, "members"), expecting: MemberList.self, what: "member list").members
    }

    /// Gives a member another role (owners and admins; only owners touch the owner role).
    public func changeRole(of member: UUID, in space: UUID, to role: SpaceRole) async throws -> SpaceMember {
        try await send(
            "PATCH", spacePath(space, "members/\(member.lowercasedText)"), body: ChangeRoleRequest(role: role),
            expecting: SpaceMember.self, what: "member"
        )
    }

    /// Removes a member from `space`; removing oneself leaves it. The last owner can do neither.
    public func removeMember(_ member: UUID, from space: UUID) async throws {
        _ = try await send("DELETE", spacePath(space, "members/\(member.lowercasedText)"), expecting: Empty.self, what: "reply")
    }
}
