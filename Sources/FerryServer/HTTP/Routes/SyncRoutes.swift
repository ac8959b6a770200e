import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/sync/v1`: push, pull, the schema, and spaces with their members.
struct SyncRoutes {
    let authenticator: SyncAuthenticator
    let sync: SyncService

    private func withinDeadline<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await authenticator.withinDeadline(work)
    }

    /// The verified caller's id and email.
    private func caller(_ request: Request) async throws -> (id: UUID, email: String) {
        let caller = try await authenticator.caller(request)
        return (caller.userID, caller.email)
    }

    struct SpaceList: Encodable, Sendable { var spaces: [SpaceSummary] }
    struct MemberList: Encodable, Sendable { var members: [SpaceMember] }

    func register(on router: Router<FerryRequestContext>) {
        let group = router.group("sync/v1").add(middleware: APIKeyMiddleware(anonKey: authenticator.auth.keys.anonKey))
        let sync = self.sync
        group.post("push") { request, _ in
            var request = request
            let caller = try await authenticator.caller(request)
            let body = try await request.decodeJSON(PushRequest.self, limit: sync.limits.maximumPushBytes)
            return JSONResponse(try await withinDeadline { try await sync.push(caller, request: body) })
        }
        group.post("pull") { request, _ in
            var request = request
            let user = try await caller(request)
            let body = try await request.decodeJSON(PullRequest.self)
            return JSONResponse(try await withinDeadline { try await sync.pull(userID: user.id, email: user.email, request: body) })
        }
        group.get("schema") { request, _ in
            _ = try await caller(request)
            return JSONResponse(sync.schema)
        }
        group.get("spaces") { request, _ in
            let user = try await caller(request)
            return JSONResponse(SpaceList(spaces: try await withinDeadline { try await sync.spaces(userID: user.id, email: user.email) }))
        }
        group.post("spaces") { request, _ in
            var request = request
            let user = try await caller(request)
            let body = try await request.decodeJSON(CreateSpaceRequest.self)
            return JSONResponse(try await withinDeadline { try await sync.createSpace(ownerID: user.id, request: body) }, status: .created)
        }
        group.get("spaces/:space/members") { request, context in
            let user = try await caller(request)
            let space = try Self.spaceID(context)
            return JSONResponse(MemberList(members: try await withinDeadline {
                try await sync.members(userID: user.id, email: user.email, space: space)
            }))
        }
        group.post("spaces/:space/members") { request, context in
            var request = request
            let user = try await caller(request)
            let space = try Self.spaceID(context)
            let body = try await request.decodeJSON(InviteRequest.self)
            return JSONResponse(try await withinDeadline {
                try await sync.invite(userID: user.id, email: user.email, space: space, request: body)
            }, status: .created)
        }
    }

    private static func spaceID(_ context: FerryRequestContext) throws -> UUID {
        guard let text = context.parameters.get("space"), let id = UUID(uuidString: text) else {
            throw APIError(.badRequest, .badRequest, "The space in the path is not a UUID.")
        }
        return id
    }
}
