import FerryCore
import Foundation

/// What the console shows and does, as JSON for `/console/api`: one more front-end over the same services (accounts,
/// devices, records, storage, backups), never a copy of their rules. Every action is written to the operator log.
struct ConsoleService: Sendable {
    typealias Storage = ConsoleStorage & SpaceStorage & DeviceStorage
    let storage: any Storage
    let auth: AuthService
    let admin: AdminService
    let devices: DeviceService
    let operators: OperatorService
    let schema: Schema
    let blobs: any BlobStore
    let activity: ActivitySampler
    let errors: ErrorTail
    let configuration: ServerConfiguration
    /// Open streams on this instance.
    let openStreams: @Sendable () -> Int
    var now: @Sendable () -> Date = Date.init

    /// The most items one page lists.
    static let maximumPage = 200

    // MARK: Overview

    func overview() async throws -> JSONValue {
        let counts = try await storage.consoleCounts()
        var collections: [JSONValue] = []
        var records = 0
        for collection in appCollections {
            let count = try await storage.consoleRecordCounts(collection, space: nil)
            records += count.live
            collections.append(["name": .string(collection.name), "records": .number(Double(count.live))])
        }
        return [
            "users": .number(Double(counts.users)), "spaces": .number(Double(counts.spaces)), "devices": .number(Double(counts.devices)),
            "records": .number(Double(records)), "streams": .number(Double(openStreams())), "collections": .array(collections),
            "version": "0.1.0", "database": .string(configuration.resolvedDatabase.engineName),
        ]
    }

    private var appCollections: [CollectionDefinition] { schema.collections.filter { !$0.isSystem } }

    // MARK: Users

    func users(_ page: ConsolePageRequest) async throws -> JSONValue {
        let found = try await storage.consoleUsers(search: page.search, offset: page.offset, limit: page.limit)
        return Self.list(found.items.map(Self.user), total: found.total)
    }

    func user(_ id: UUID) async throws -> JSONValue {
        guard let user = try await auth.storage.user(id: id) else { throw AdminService.noUser(id) }
        let sessions = try await storage.consoleSessions(userID: id)
        let devices = try await storage.devices(userID: id)
        let spaces = try await storage.spaces(userID: id)
        return [
            "user": Self.user(user),
            "sessions": .array(sessions.map { session in
                ["id": .string(session.id.lowercasedText), "created_at": Self.date(session.createdAt), "refreshed_at": Self.date(session.refreshedAt),
                 "device_id": session.deviceID.map { .string($0.lowercasedText) } ?? .null]
            }),
            "devices": .array(devices.map { Self.device($0, email: user.email) }),
            "spaces": .array(spaces.map { space in
                ["id": .string(space.id.lowercasedText), "name": .string(space.name), "role": .string(space.role.rawValue),
                 "encrypted": .bool(space.isEncrypted), "personal": .bool(space.isPersonal)]
            }),
        ]
    }

    func ban(_ id: UUID, duration: String, by session: OperatorService.Session) async throws -> JSONValue {
        let user = try await admin.updateUser(id, password: nil, metadata: nil, banDuration: duration)
        await operators.log(session.operatorRecord.email, duration == "none" ? "unban" : "ban \(duration)", target: user.email.isEmpty ? id.lowercasedText : user.email)
        guard let stored = try await auth.storage.user(id: id) else { throw AdminService.noUser(id) }
        return Self.user(stored)
    }

    /// Ends every session of the user; their open streams close.
    func signOut(_ id: UUID, by session: OperatorService.Session) async throws -> JSONValue {
        guard let user = try await auth.storage.user(id: id) else { throw AdminService.noUser(id) }
        try await auth.storage.deleteSessions(userID: id, keeping: nil)
        await auth.events?.publish([.accountChanged(id)])
        await operators.log(session.operatorRecord.email, "sign_out_user", target: user.email)
        return ["ended": true]
    }

    func deleteUser(_ id: UUID, by session: OperatorService.Session) async throws {
        guard let user = try await auth.storage.user(id: id) else { throw AdminService.noUser(id) }
        try await admin.deleteUser(id)
        await operators.log(session.operatorRecord.email, "delete_user", target: user.email)
    }

    // MARK: Spaces

    func spaces(_ page: ConsolePageRequest) async throws -> JSONValue {
        let found = try await storage.consoleSpaces(search: page.search, offset: page.offset, limit: page.limit)
        return Self.list(found.items.map(Self.space), total: found.total)
    }

    func space(_ id: UUID) async throws -> JSONValue {
        guard let space = try await storage.consoleSpace(id: id) else {
            throw ServiceError(.notFound, .spaceNotFound, "No space has the id \(id.lowercasedText).")
        }
        let members = try await storage.members(space: id)
        let invitations = try await storage.invitations(space: id, now: now())
        var records: [JSONValue] = []
        for collection in appCollections {
            let count = try await storage.consoleRecordCounts(collection, space: id)
            records.append(["collection": .string(collection.name), "records": .number(Double(count.live)), "deleted": .number(Double(count.deleted))])
        }
        return [
            "space": Self.space(space),
            "members": .array(members.map { member in
                ["user_id": member.userId.map { .string($0.lowercasedText) } ?? .null, "email": .string(member.email), "role": .string(member.role.rawValue)]
            }),
            "invitations": .array(invitations.map { invitation in
                ["id": .string(invitation.id.lowercasedText), "email": .string(invitation.email), "role": .string(invitation.role.rawValue),
                 "created_at": Self.date(invitation.createdAt), "expires_at": Self.date(invitation.expiresAt)]
            }),
            "records": .array(records),
        ]
    }

    // MARK: Devices

    func devices(_ page: ConsolePageRequest) async throws -> JSONValue {
        let found = try await storage.consoleDevices(search: page.search, offset: page.offset, limit: page.limit)
        return Self.list(found.items.map { Self.device($0.device, email: $0.email) }, total: found.total)
    }

    func revoke(device id: UUID, by session: OperatorService.Session) async throws -> JSONValue {
        let device = try await devices.revokeByOperator(id)
        await operators.log(session.operatorRecord.email, "revoke_device", target: "\(device.name) (\(id.lowercasedText))")
        let email = try await auth.storage.user(id: device.userID)?.email ?? ""
        return Self.device(device, email: email)
    }

    // MARK: Activity, storage, settings, log

    func activityReport() -> JSONValue {
        [
            "interval": .number(Double(activity.interval.components.seconds)),
            "samples": .array(activity.samples.map { sample in
                [
                    "at": Self.date(sample.at), "requests": .object(sample.requests.mapValues(JSONValue.number)),
                    "by_route": .object(sample.byRoute.mapValues(JSONValue.number)), "pushes": .number(sample.pushes),
                    "pulls": .number(sample.pulls), "conflicts": .number(sample.conflicts), "refused": .number(sample.refused),
                    "streams": .number(sample.streams),
                    "latency_ms": ["p50": .number(sample.latency.p50), "p95": .number(sample.latency.p95), "p99": .number(sample.latency.p99)],
                ]
            }),
            "errors": .array(errors.recent.map { entry in
                ["at": Self.date(entry.at), "method": .string(entry.method), "path": .string(entry.path), "status": .number(Double(entry.status)),
                 "error_code": .string(entry.code), "message": .string(entry.message)]
            }),
        ]
    }

    func storageReport() async throws -> JSONValue {
        let usage = Dictionary(try await storage.consoleBuckets().map { ($0.bucket, $0) }, uniquingKeysWith: { first, _ in first })
        let totals = try await blobs.totals()
        return [
            "buckets": .array(schema.buckets.map { bucket in
                ["id": .string(bucket.name), "public": .bool(bucket.isPublic), "objects": .number(Double(usage[bucket.name]?.objects ?? 0)),
                 "bytes": .number(Double(usage[bucket.name]?.bytes ?? 0))]
            }),
            "blobs": ["count": .number(Double(totals.count)), "bytes": .number(Double(totals.bytes))],
        ]
    }

    func objects(bucket: String, _ page: ConsolePageRequest) async throws -> JSONValue {
        guard schema.buckets.contains(where: { $0.name == bucket }) else {
            throw ServiceError(.notFound, .bucketNotFound, "No bucket is named \(bucket.prefix(100)).")
        }
        let found = try await storage.consoleObjects(bucket: bucket, search: page.search, offset: page.offset, limit: page.limit)
        return Self.list(found.items.map { object in
            ["name": .string(object.name), "size": .number(Double(object.size)), "content_type": .string(object.contentType),
             "created_at": Self.date(object.createdAt)]
        }, total: found.total)
    }

    func log(_ page: ConsolePageRequest) async throws -> JSONValue {
        let found = try await operators.storage.operatorActions(offset: page.offset, limit: page.limit)
        return Self.list(found.actions.map { action in
            ["at": Self.date(action.at), "operator": .string(action.operatorEmail), "action": .string(action.action), "target": .string(action.target)]
        }, total: found.total)
    }

    // MARK: Shapes

    static func list(_ items: [JSONValue], total: Int) -> JSONValue {
        ["items": .array(items), "total": .number(Double(total))]
    }

    static func date(_ date: Date?) -> JSONValue {
        date.map { .string(Timestamp.format($0)) } ?? .null
    }

    static func user(_ user: UserRecord) -> JSONValue {
        [
            "id": .string(user.id.lowercasedText), "email": .string(user.email), "created_at": date(user.createdAt),
            "last_sign_in_at": date(user.lastSignInAt), "banned_until": date(user.bannedUntil), "email_confirmed_at": date(user.emailConfirmedAt),
            "providers": .array(user.providers.map(JSONValue.string)),
        ]
    }

    static func space(_ space: ConsoleSpace) -> JSONValue {
        [
            "id": .string(space.id.lowercasedText), "name": .string(space.name), "encrypted": .bool(space.isEncrypted),
            "personal": .bool(space.isPersonal), "members": .number(Double(space.members)), "seq": .number(Double(space.seq)),
            "created_at": date(space.createdAt), "changed_at": date(space.changedAt),
        ]
    }

    static func device(_ device: DeviceRecord, email: String) -> JSONValue {
        [
            "id": .string(device.id.lowercasedText), "user_id": .string(device.userID.lowercasedText), "email": .string(email),
            "name": .string(device.name), "type": .string(device.type.rawValue), "trust": .string(device.trust.rawValue),
            "created_at": date(device.createdAt), "last_seen_at": date(device.lastSeenAt),
            "push": device.pushToken == nil ? .null : .string(device.pushEnvironment?.rawValue ?? "production"), "revoked_at": date(device.revokedAt),
        ]
    }
}

/// A list request's paging and search, checked.
struct ConsolePageRequest: Sendable {
    var limit = 50
    var offset = 0
    var search: String?

    init(limit: Int? = nil, offset: Int? = nil, search: String? = nil) throws {
        if let limit {
            guard (1...ConsoleService.maximumPage).contains(limit) else {
                throw ServiceError(.invalidRequest, .validationFailed, "limit is 1 to \(ConsoleService.maximumPage).")
            }
            self.limit = limit
        }
        if let offset {
            guard (0...1_000_000_000).contains(offset) else { throw ServiceError(.invalidRequest, .validationFailed, "offset is 0 or more.") }
            self.offset = offset
        }
        if let search {
            guard search.count <= 200 else { throw ServiceError(.invalidRequest, .validationFailed, "search is at most 200 characters.") }
            guard !search.contains("\u{0}") else {
                throw ServiceError(.invalidRequest, .validationFailed, "search cannot contain the NUL character (U+0000).")
            }
            self.search = search.isEmpty ? nil : search
        }
    }
}

extension DatabaseLocation {
    /// `sqlite` or `postgres`.
    var engineName: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgres"
        }
    }
}
