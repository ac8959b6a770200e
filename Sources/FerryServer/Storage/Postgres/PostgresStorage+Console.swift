import FerryCore
import Foundation
import PostgresNIO

extension PostgresStorage: ConsoleStorage {
    func consoleUsers(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<UserRecord> {
        let search = Self.search(search)
        let users = try await users(try await client.query(
            """
            SELECT \(unescaped: Self.userColumns) FROM ferry_users WHERE (\(search)::text IS NULL OR strpos(lower(email), \(search)) > 0)
            ORDER BY created_at DESC, id LIMIT \(limit) OFFSET \(offset)
            """,
            logger: logger
        ))
        return ConsolePage(items: users, total: try await count(
            "SELECT count(*) FROM ferry_users WHERE (\(search)::text IS NULL OR strpos(lower(email), \(search)) > 0)"
        ))
    }

    func consoleSessions(userID: UUID) async throws -> [SessionRecord] {
        let rows = try await client.query(
            "SELECT id, user_id, created_at, refreshed_at, device_id FROM ferry_sessions WHERE user_id = \(userID) ORDER BY created_at DESC, id",
            logger: logger
        )
        var sessions: [SessionRecord] = []
        for try await (id, userID, createdAt, refreshedAt, deviceID) in rows.decode((UUID, UUID, Date, Date, UUID?).self) {
            sessions.append(SessionRecord(id: id, userID: userID, createdAt: createdAt, refreshedAt: refreshedAt, deviceID: deviceID))
        }
        return sessions
    }

    private static let spaceSelect = """
        SELECT s.id, s.name, s.is_encrypted, s.is_personal, s.seq, s.created_at, s.changed_at,
          (SELECT count(*) FROM ferry_members m WHERE m.space_id = s.id)::bigint
        FROM ferry_spaces s
        """

    func consoleSpaces(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<ConsoleSpace> {
        let search = Self.search(search)
        let items = try await spaces(try await client.query(
            """
            \(unescaped: Self.spaceSelect) WHERE (\(search)::text IS NULL OR strpos(lower(s.name), \(search)) > 0)
            ORDER BY s.created_at DESC, s.id LIMIT \(limit) OFFSET \(offset)
            """,
            logger: logger
        ))
        return ConsolePage(items: items, total: try await count(
            "SELECT count(*) FROM ferry_spaces s WHERE (\(search)::text IS NULL OR strpos(lower(s.name), \(search)) > 0)"
        ))
    }

    func consoleSpace(id: UUID) async throws -> ConsoleSpace? {
        try await spaces(try await client.query("\(unescaped: Self.spaceSelect) WHERE s.id = \(id)", logger: logger)).first
    }

    private func spaces(_ rows: PostgresRowSequence) async throws -> [ConsoleSpace] {
        var spaces: [ConsoleSpace] = []
        for try await (id, name, encrypted, personal, seq, createdAt, changedAt, members) in rows.decode(
            (UUID, String, Bool, Bool, Int64, Date, Date?, Int64).self
        ) {
            spaces.append(ConsoleSpace(
                id: id, name: name, isEncrypted: encrypted, isPersonal: personal, members: Int(members), seq: seq, createdAt: createdAt,
                changedAt: changedAt
            ))
        }
        return spaces
    }

    func consoleDevices(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<ConsoleDevice> {
        let search = Self.search(search)
        let columns = Self.deviceColumns.split(separator: ", ").map { "d.\($0)" }.joined(separator: ", ")
        let rows = try await client.query(
            """
            SELECT \(unescaped: columns), u.email FROM ferry_devices d JOIN ferry_users u ON u.id = d.user_id
            WHERE (\(search)::text IS NULL OR strpos(lower(d.name), \(search)) > 0 OR strpos(lower(u.email), \(search)) > 0
              OR strpos(d.id::text, \(search)) > 0)
            ORDER BY d.last_seen_at DESC, d.id LIMIT \(limit) OFFSET \(offset)
            """,
            logger: logger
        )
        var items: [ConsoleDevice] = []
        for try await (id, user, name, type, host, key, token, environment, trust, created, seen, revoked, email) in rows.decode(
            (UUID, UUID, String, String, String, String, String?, String?, String, Date, Date, Date?, String).self
        ) {
            let device = Self.device((id, user, name, type, host, key, token, environment, trust, created, seen, revoked))
            items.append(ConsoleDevice(device: device, email: email))
        }
        return ConsolePage(
            items: items,
            total: try await count(
                """
                SELECT count(*) FROM ferry_devices d JOIN ferry_users u ON u.id = d.user_id
                WHERE (\(search)::text IS NULL OR strpos(lower(d.name), \(search)) > 0 OR strpos(lower(u.email), \(search)) > 0
                  OR strpos(d.id::text, \(search)) > 0)
                """
            )
        )
    }

    func consoleCounts() async throws -> (users: Int, spaces: Int, devices: Int) {
        let rows = try await client.query(
            "SELECT (SELECT count(*) FROM ferry_users), (SELECT count(*) FROM ferry_spaces), (SELECT count(*) FROM ferry_devices)", logger: logger
        )
        for try await (users, spaces, devices) in rows.decode((Int64, Int64, Int64).self) { return (Int(users), Int(spaces), Int(devices)) }
        return (0, 0, 0)
    }

    func consoleRecordCounts(_ collection: CollectionDefinition, space: UUID?) async throws -> (live: Int, deleted: Int) {
        var binds = PostgresBindings()
        var sql = "SELECT count(*) FILTER (WHERE NOT _deleted), count(*) FILTER (WHERE _deleted) FROM \(SQLDialect.postgres.quote(collection.name))"
        if let space {
            binds.append(space)
            sql += " WHERE _space = $1"
        }
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await (live, deleted) in rows.decode((Int64, Int64).self) { return (Int(live), Int(deleted)) }
        return (0, 0)
    }

    func consoleRecord(_ collection: CollectionDefinition, id: UUID) async throws -> (seq: Int64, record: StoredRecord)? {
        var binds = PostgresBindings()
        binds.append(id)
        return try await client.withConnection { connection in
            try await Self.fetchRecords(connection, collection, where: "id = $1", binds: binds, logger: self.logger).first.map { ($0.seq, $0.record) }
        }
    }

    func consoleChildren(_ collection: CollectionDefinition, field: String, parent: UUID, limit: Int) async throws -> [(id: UUID, record: StoredRecord)] {
        var binds = PostgresBindings()
        binds.append(parent)
        binds.append(limit)
        let condition = "\(SQLDialect.postgres.quote(field)) = $1 AND NOT _deleted ORDER BY _seq DESC LIMIT $2"
        return try await client.withConnection { connection in
            try await Self.fetchRecords(connection, collection, where: condition, binds: binds, logger: self.logger).map { ($0.id, $0.record) }
        }
    }

    func consoleBuckets() async throws -> [ConsoleBucketUsage] {
        let rows = try await client.query("SELECT bucket, count(*), coalesce(sum(size), 0)::bigint FROM ferry_objects GROUP BY bucket", logger: logger)
        var buckets: [ConsoleBucketUsage] = []
        for try await (bucket, objects, bytes) in rows.decode((String, Int64, Int64).self) {
            buckets.append(ConsoleBucketUsage(bucket: bucket, objects: Int(objects), bytes: bytes))
        }
        return buckets
    }

    func consoleObjects(bucket: String, search: String?, offset: Int, limit: Int) async throws -> ConsolePage<StoredObject> {
        let search = Self.search(search)
        let items = try await Self.objects(try await client.query(
            """
            SELECT \(unescaped: Self.objectColumns) FROM ferry_objects
            WHERE bucket = \(bucket) AND (\(search)::text IS NULL OR strpos(lower(name), \(search)) > 0)
            ORDER BY name LIMIT \(limit) OFFSET \(offset)
            """,
            logger: logger
        ))
        return ConsolePage(items: items, total: try await count(
            "SELECT count(*) FROM ferry_objects WHERE bucket = \(bucket) AND (\(search)::text IS NULL OR strpos(lower(name), \(search)) > 0)"
        ))
    }

    /// The lowercased search text, or `nil` (which matches everything) when there is none.
    private static func search(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text.lowercased()
    }

    private func count(_ query: PostgresQuery) async throws -> Int {
        for try await count in try await client.query(query, logger: logger).decode(Int64.self) { return Int(count) }
        return 0
    }
}
