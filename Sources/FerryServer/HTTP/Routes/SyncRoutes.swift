import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/sync/v1`: push, pull and the schema.
struct SyncRoutes {
    let sync: SyncService

    /// `pulling`: the group whose authentication reads the caller's spaces with its session, for the pull alone.
    func register(on group: DeadlineGroup<AuthenticatedContext>, pulling: DeadlineGroup<AuthenticatedContext>) {
        let sync = self.sync
        group.post("push") { request, context in
            var request = request
            // An id past 2^53-1 is no number the reader takes: refused with the code the service gives one out of range.
            let body = try await request.decodeJSON(PushRequest.self, limit: sync.limits.maximumPushBytes) { path in
                guard path.hasSuffix(".mutationId") || path == "follows" else { return nil }
                return APIError(.unprocessableContent, .mutationOrder, "Mutation ids and follows run from 1 to 2^53-1, which JSON carries exactly in every language; \(path) does not.")
            }
            return JSONResponse(try await sync.push(context.caller, request: body))
        }
        pulling.post("pull") { request, context in
            var request = request
            let body = try await request.decodeJSON(PullRequest.self, limit: 64 * 1024)
            return JSONResponse(try await sync.pull(context.caller, request: body))
        }
        group.get("schema") { _, _ in
            JSONResponse(sync.schema)
        }
    }
}

extension RequestContext {
    /// The UUID in the path parameter `name`, or 400 naming what it should be.
    func uuidParameter(_ name: String, what: String) throws -> UUID {
        guard let text = parameters.get(name), let id = UUID(wireText: text) else {
            throw APIError(.badRequest, .badRequest, "The \(what) in the path is not a UUID.")
        }
        return id
    }
}
