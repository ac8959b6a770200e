import FerryCore
import Foundation
import GRDB

extension SQLiteStorage: ConsoleStorage {
    func consoleUsers(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<UserRecord> {
        let (condition, arguments) = Self.matching(["email"], search)
        return try await pool.read { db in
            ConsolePage(
                items: try Row.fetchAll(
                    db, sql: "SELECT * FROM ferry_users WHERE \(condition) ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
                    arguments: arguments + [limit, offset]
                ).map(UserRecord.init(row:)),
                total: try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_users WHERE \(condition)", arguments: arguments) ?? 0
            )
        }
    }

    func consoleSessions(userID: UUID) async throws -> [SessionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM ferry_sessions WHERE user_id = ? ORDER BY created_at DESC, id", arguments: [userID.databaseText]
            ).map(SessionRecord.init(row:))
        }
    }

    private static let spaceSelect = """
        SELECT s.id, s.name, s.is_encrypted, s.is_personal, s.seq, s.created_at, s.changed_at,
          (SELECT count(*) FROM ferry_members m WHERE m.space_id = s.id) AS members
        FROM ferry_spaces s
        """

    /// Newest first, by insertion order: `created_at` holds two text formats here (personal spaces GRDB's, shared ones
    /// ISO 8601), which do not sort together.
    func consoleSpaces(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<ConsoleSpace> {
        let (condition, arguments) = Self.matching(["s.name"], search)
        return try await pool.read { db in
            ConsolePage(
                items: try Row.fetchAll(
                    db, sql: "\(Self.spaceSelect) WHERE \(condition) ORDER BY s.rowid DESC LIMIT ? OFFSET ?",
                    arguments: arguments + [limit, offset]
                ).compactMap(Self.consoleSpace),
                total: try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_spaces s WHERE \(condition)", arguments: arguments) ?? 0
            )
        }
    }

    func consoleSpace(id: UUID) async throws -> ConsoleSpace? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "\(Self.spaceSelect) WHERE s.id = ?", arguments: [id.databaseText]).flatMap(Self.consoleSpace)
        }
    }

    private static func consoleSpace(_ row: Row) -> ConsoleSpace? {
        guard let id = UUID(wireText: row["id"]) else { return nil }
        return ConsoleSpace(
            id: id, name: row["name"], isEncrypted: row["is_encrypted"], isPersonal: row["is_personal"], members: row["members"], seq: row["seq"],
            createdAt: row["created_at"], changedAt: row["changed_at"]
        )
    }

    func consoleDevices(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<ConsoleDevice> {
        let (condition, arguments) = Self.matching(["d.name", "u.email", "d.id"], search)
        let from = "FROM ferry_devices d JOIN ferry_users u ON u.id = d.user_id WHERE \(condition)"
        return try await pool.read { db in
            ConsolePage(
                items: try Row.fetchAll(
                    db, sql: "SELECT d.*, u.email AS user_email \(from) ORDER BY d.last_seen_at DESC, d.id LIMIT ? OFFSET ?",
                    arguments: arguments + [limit, offset]
                ).map { ConsoleDevice(device: DeviceRecord(row: $0), email: $0["user_email"]) },
                total: try Int.fetchOne(db, sql: "SELECT count(*) \(from)", arguments: arguments) ?? 0
            )
        }
    }

    func consoleCounts() async throws -> (users: Int, spaces: Int, devices: Int) {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT (SELECT count(*) FROM ferry_users) AS users, (SELECT count(*) FROM ferry_spaces) AS spaces,
                  (SELECT count(*) FROM ferry_devices) AS devices
                """)
            return (row?["users"] ?? 0, row?["spaces"] ?? 0, row?["devices"] ?? 0)
        }
    }

    func consoleRecordCounts(_ collection: CollectionDefinition, space: UUID?) async throws -> (live: Int, deleted: Int) {
        let table = SQLDialect.sqlite.quote(collection.name)
        return try await pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: "SELECT count(*) FILTER (WHERE _deleted = 0) AS live, count(*) FILTER (WHERE _deleted <> 0) AS deleted FROM \(table)"
                    + (space == nil ? "" : " WHERE _space = ?"),
                arguments: StatementArguments(space.map { [$0.databaseText] } ?? [])
            )
            return (row?["live"] ?? 0, row?["deleted"] ?? 0)
        }
    }

    func consoleRecord(_ collection: CollectionDefinition, id: UUID) async throws -> (seq: Int64, record: StoredRecord)? {
        try await pool.read { db in
            try Self.fetchRecords(db, collection, where: "id = ?", arguments: [id.databaseText]).first.map { ($0.seq, $0.record) }
        }
    }

    func consoleChildren(_ collection: CollectionDefinition, field: String, parent: UUID, limit: Int) async throws -> [(id: UUID, record: StoredRecord)] {
        let condition = "\(SQLDialect.sqlite.quote(field)) = ? AND _deleted = 0 ORDER BY _seq DESC LIMIT ?"
        return try await pool.read { db in
            try Self.fetchRecords(db, collection, where: condition, arguments: [parent.databaseText, limit]).map { ($0.id, $0.record) }
        }
    }

    func consoleBuckets() async throws -> [ConsoleBucketUsage] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT bucket, count(*) AS objects, coalesce(sum(size), 0) AS bytes FROM ferry_objects GROUP BY bucket").map {
                ConsoleBucketUsage(bucket: $0["bucket"], objects: $0["objects"], bytes: $0["bytes"])
            }
        }
    }

    func consoleObjects(bucket: String, search: String?, offset: Int, limit: Int) async throws -> ConsolePage<StoredObject> {
        let (condition, arguments) = Self.matching(["name"], search)
        return try await pool.read { db in
            ConsolePage(
                items: try Row.fetchAll(
                    db, sql: "SELECT * FROM ferry_objects WHERE bucket = ? AND \(condition) ORDER BY name LIMIT ? OFFSET ?",
                    arguments: [bucket] + arguments + [limit, offset]
                ).compactMap(Self.object),
                total: try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM ferry_objects WHERE bucket = ? AND \(condition)", arguments: [bucket] + arguments
                ) ?? 0
            )
        }
    }

    /// A condition true when any of `columns` contains `search` (case-insensitively), and its arguments; `1` without one.
    private static func matching(_ columns: [String], _ search: String?) -> (String, StatementArguments) {
        guard let search, !search.isEmpty else { return ("1", []) }
        let condition = columns.map { "instr(lower(\($0)), lower(?)) > 0" }.joined(separator: " OR ")
        return ("(\(condition))", StatementArguments(Array(repeating: search, count: columns.count)))
    }
}
