import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/sync/v1/spaces` and `/sync/v1/invitations`: spaces, their members and invitation codes.
struct SpaceRoutes {
    let spaces: SpaceService

    struct SpaceList: Encodable, Sendable { var spaces: [SpaceSummary] }
    struct MemberList: Encodable, Sendable { var members: [SpaceMember] }
    struct InvitationList: Encodable, Sendable { var invitations: [SpaceInvitation] }

    func register(on group: DeadlineGroup<AuthenticatedContext>) {
        let spaces = self.spaces
        group.get("spaces") { _, context in
            JSONResponse(SpaceList(spaces: try await spaces.spaces(context.caller)))
        }
        group.post("spaces") { request, context in
            var request = request
            let body = try await request.decodeJSON(CreateSpaceRequest.self)
            return JSONResponse(try await spaces.createSpace(context.caller, request: body), status: .created)
        }
        group.get("spaces/:space/members") { _, context in
            let space = try context.uuidParameter("space", what: "space")
            return JSONResponse(MemberList(members: try await spaces.members(context.caller, space: space)))
        }
        group.patch("spaces/:space/members/:user") { request, context in
            var request = request
            let (space, member) = (try context.uuidParameter("space", what: "space"), try context.uuidParameter("user", what: "member"))
            let body = try await request.decodeJSON(ChangeRoleRequest.self)
            return JSONResponse(try await spaces.changeRole(context.caller, space: space, member: member, request: body))
        }
        group.delete("spaces/:space/members/:user") { _, context in
            let (space, member) = (try context.uuidParameter("space", what: "space"), try context.uuidParameter("user", what: "member"))
            try await spaces.remove(context.caller, space: space, member: member)
            return HTTPResponse.Status.noContent
        }
        group.post("spaces/:space/invitations") { request, context in
            var request = request
            let space = try context.uuidParameter("space", what: "space")
            let body = try await request.decodeJSON(InviteRequest.self)
            return JSONResponse(try await spaces.invite(context.caller, space: space, request: body), status: .created)
        }
        group.get("spaces/:space/invitations") { _, context in
            let space = try context.uuidParameter("space", what: "space")
            return JSONResponse(InvitationList(invitations: try await spaces.invitations(context.caller, space: space)))
        }
        group.delete("spaces/:space/invitations/:invitation") { _, context in
            let (space, invitation) = (try context.uuidParameter("space", what: "space"), try context.uuidParameter("invitation", what: "invitation"))
            try await spaces.revokeInvitation(context.caller, space: space, invitation: invitation)
            return HTTPResponse.Status.noContent
        }
        group.post("invitations/accept") { request, context in
            var request = request
            let body = try await request.decodeJSON(AcceptInvitationRequest.self)
            return JSONResponse(try await spaces.accept(context.caller, request: body))
        }
    }
}
