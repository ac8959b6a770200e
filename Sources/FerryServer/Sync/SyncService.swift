import FerryCore
import Foundation
import HTTPTypes
import Logging

/// The rules of `/sync/v1`: who may push and pull what, with which limits. Engine-agnostic:
/// storage runs each push in one transaction and shares ``PushPlan`` for the merge.
struct SyncService: Sendable {
    typealias Storage = RecordStorage & SpaceStorage & DeviceStorage
    let storage: any Storage
    let schema: Schema
    let limits: SyncLimits
    let logger: Logger
    var now: @Sendable () -> Date = Date.init

    /// The caller's spaces, with roles.
    func spaces(userID: UUID, email: String) async throws -> [SpaceSummary] {
        try await storage.spaces(userID: userID, email: email, now: now())
    }

    /// The largest mutation id: 2^53 - 1, the largest integer a JSON number carries exactly everywhere.
    static let largestMutationID: Int64 = 9_007_199_254_740_991

    /// Runs a push for the device the caller's session is bound to (a whole-request error for any other).
    func push(_ caller: SyncCaller, request: PushRequest) async throws -> PushResponse {
        let (userID, email) = (caller.userID, caller.email)
        guard let device = caller.device else {
            throw APIError(
                .forbidden, .deviceNotRegistered,
                "This session is not bound to a device; register device \(request.deviceId.lowercased) with PUT /sync/v1/devices/{id} before pushing."
            )
        }
        guard device.id == request.deviceId else {
            throw APIError(
                .forbidden, .deviceMismatch,
                "This session is bound to device \(device.id.lowercased); a session pushes only its own device's writes."
            )
        }
        guard request.mutations.count <= limits.maximumBatchLength else {
            throw APIError(
                .unprocessableContent, .batchTooLarge,
                "The push has \(request.mutations.count) mutations; send at most \(limits.maximumBatchLength) per request."
            )
        }
        for (previous, next) in zip(request.mutations, request.mutations.dropFirst()) where next.mutationId <= previous.mutationId {
            throw APIError(
                .unprocessableContent, .mutationOrder,
                "Mutation ids must increase within a push: \(next.mutationId) follows \(previous.mutationId)."
            )
        }
        if let first = request.mutations.first, first.mutationId < 1 {
            throw APIError(.unprocessableContent, .mutationOrder, "Mutation ids start at 1.")
        }
        if let last = request.mutations.last, last.mutationId > Self.largestMutationID {
            throw APIError(.unprocessableContent, .mutationOrder, "Mutation ids go up to 2^53-1, which JSON carries exactly in every language.")
        }
        let summaries = try await spaces(userID: userID, email: email)
        let roles = Dictionary(summaries.map { ($0.id, $0.role) }, uniquingKeysWith: { first, _ in first })
        let time = now()
        var validator = MutationValidator(schema: schema, limits: limits, userID: userID, roles: roles, now: time)
        // Key versions only grow, so a version valid now is still valid when the push commits.
        let encrypted = summaries.filter(\.isEncrypted)
        validator.keyVersions = Dictionary(encrypted.map { ($0.id, $0.keyVersion) }, uniquingKeysWith: { first, _ in first })
        var batch = PushBatch(
            userID: userID, deviceID: request.deviceId, entries: request.mutations.map(validator.validate),
            mutationIDs: request.mutations.map(\.mutationId), fingerprints: request.mutations.map(MutationFingerprint.init),
            schema: schema, now: time
        )
        batch.sealedSpaces = Set(encrypted.map(\.id))
        let response: PushResponse
        do {
            response = try await storage.push(batch)
        } catch let stale as PushPlan.StaleMutationID {
            throw APIError(
                .conflict, .mutationIDStale,
                "Mutation id \(stale.mutationID) was processed for a different write of this device (its store was reset or restored); number waiting writes after \(stale.lastMutationID) and push again.",
                details: ["last_mutation_id": .number(Double(stale.lastMutationID))]
            )
        }
        let rejected = response.results.filter { $0.status == .rejected }.count
        logger.debug("push", metadata: [
            "ferry.device.id": "\(request.deviceId.lowercased)", "ferry.sync.mutations": "\(request.mutations.count)",
            "ferry.sync.rejected": "\(rejected)", "ferry.sync.last_mutation_id": "\(response.lastMutationId)",
        ])
        return response
    }

    func pull(userID: UUID, email: String, request: PullRequest) async throws -> PullResponse {
        if let limit = request.limit, limit < 1 {
            throw APIError(.unprocessableContent, .validationFailed, "limit must be at least 1.")
        }
        for (space, cursor) in request.cursors where cursor < 0 {
            throw APIError(.unprocessableContent, .validationFailed, "The cursor of space \(space.lowercased) is negative.")
        }
        let limit = min(request.limit ?? limits.defaultPullLimit, limits.maximumPullLimit)
        var response = PullResponse(changes: [], cursors: [:], hasMore: false)
        var cursors: [SpaceCursor] = []
        let spaces = try await spaces(userID: userID, email: email)
        for space in spaces {
            if space.isEncrypted { response.keyVersions[space.id] = space.keyVersion }
            if request.exclude.contains(space.id) { continue }
            let cursor = request.cursors[space.id] ?? 0
            response.cursors[space.id] = cursor
            cursors.append(SpaceCursor(space: space.id, cursor: cursor))
        }
        let pages = try await storage.pull(cursors, limit: limit, bytes: limits.maximumPullBytes, schema: schema)
        for space in spaces where response.cursors[space.id] != nil {
            guard let page = pages[space.id] else {
                // Not read: the page filled up (in changes or bytes) before this space.
                response.hasMore = response.hasMore || space.seq > response.cursors[space.id, default: 0]
                continue
            }
            if page.resetRequired {
                response.resetRequired.append(space.id)
                continue
            }
            response.changes += page.changes
            response.cursors[space.id] = page.cursor
            response.hasMore = response.hasMore || page.hasMore
        }
        return response
    }

    func createSpace(ownerID: UUID, request: CreateSpaceRequest) async throws -> SpaceSummary {
        let name = request.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 200, !name.contains("\u{0}") else {
            throw APIError(.unprocessableContent, .validationFailed, "A space needs a name of 1 to 200 characters.")
        }
        let id = request.id ?? UUID()
        do {
            try await storage.createSpace(id: id, name: name, isEncrypted: request.encrypted ?? false, ownerID: ownerID, now: now())
        } catch SpaceStorageError.spaceExists {
            throw APIError(.conflict, .spaceExists, "A space with id \(id.lowercased) exists already.")
        }
        return SpaceSummary(id: id, name: name, isPersonal: false, isEncrypted: request.encrypted ?? false, role: .owner, seq: 0)
    }

    func invite(userID: UUID, email: String, space: UUID, request: InviteRequest) async throws -> SpaceMember {
        let summary = try await membership(userID: userID, email: email, space: space)
        guard summary.role.canManageMembers else {
            throw APIError(.forbidden, .insufficientRole, "Your role in this space is \(summary.role.rawValue); only owners and admins invite.")
        }
        guard !summary.isPersonal else {
            throw APIError(.unprocessableContent, .validationFailed, "A personal space cannot be shared; create a shared space.")
        }
        guard request.role != .owner else {
            throw APIError(.unprocessableContent, .validationFailed, "A space has one owner; invite as admin, member or viewer.")
        }
        let invitee = request.email.trimmingCharacters(in: .whitespaces).lowercased()
        guard invitee.contains("@"), invitee.count <= 320, !invitee.contains("\u{0}") else {
            throw APIError(.unprocessableContent, .emailAddressInvalid, "'\(invitee.prefix(64))' is not an email address.")
        }
        return try await storage.invite(space: space, email: invitee, role: request.role, now: now())
    }

    func members(userID: UUID, email: String, space: UUID) async throws -> [SpaceMember] {
        _ = try await membership(userID: userID, email: email, space: space)
        return try await storage.members(space: space)
    }

    /// The caller's membership of `space`; 404 when there is none, so non-members learn nothing of it.
    private func membership(userID: UUID, email: String, space: UUID) async throws -> SpaceSummary {
        guard let summary = try await spaces(userID: userID, email: email).first(where: { $0.id == space }) else {
            throw APIError(.notFound, .spaceNotFound, "No space \(space.lowercased) among yours.")
        }
        return summary
    }
}
