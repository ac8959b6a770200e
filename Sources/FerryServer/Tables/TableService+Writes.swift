import FerryCore
import Foundation

extension TableService {
    /// What a `POST` does with a row whose key is taken (`Prefer: resolution=…`).
    enum Resolution: Sendable {
        /// No resolution: a taken key is `23505`.
        case none
        case mergeDuplicates
        case ignoreDuplicates
    }

    /// The rows a write changed, as its `select` shows them (for `Prefer: return=representation`).
    struct Written: Sendable {
        var rows: TableRows
        var count: Int
    }

    /// `POST`: inserts `bodies` (or upserts them, on `id` or on the unique key `query.onConflict` names).
    func insert(
        _ caller: TableCaller, table: String, bodies: [[String: JSONValue]], query: TableQuery, resolution: Resolution
    ) async throws -> Written {
        let collection = try writableCollection(table)
        let plan = try SelectPlan(query.select, collection: collection, schema: schema)
        guard bodies.count <= limits.maximumWrittenRows else { throw tooManyRows() }
        let conflictKey = try conflictColumns(query.onConflict, collection: collection)
        var rows: [(id: UUID, space: UUID, fields: [String: JSONValue])] = []
        for body in bodies {
            var fields = try writtenFields(body, collection: collection, keeping: query.columns)
            let id = try fields.removeValue(forKey: "id").map { try uuid($0, column: "id") } ?? UUID()
            let space = try fields.removeValue(forKey: "_space").map { try uuid($0, column: "_space") } ?? personalSpace(of: caller)
            rows.append((id, space, fields))
        }
        let scope = try await writeScope(caller, spaces: Set(rows.map(\.space)))
        if let conflictKey, conflictKey != ["id"], resolution != .none {
            // The live record holding each row's key, if any, takes the row: found before the push, so a record
            // stored meanwhile with the same key breaks the unique index instead (`23505`).
            for index in rows.indices {
                let filters = conflictKey.map { RowFilter.compare($0, .eq, rows[index].fields[$0]?.stringValue ?? rows[index].fields[$0]?.jsonText ?? "") }
                guard !conflictKey.contains(where: { (rows[index].fields[$0] ?? .null).isNull }) else { continue }
                let selection = RowSelection(collection: collection, spaces: [rows[index].space], filter: .all(filters), limit: 1)
                let found = try await storage.select(selection).records
                if !found.isEmpty, let existing = found.ids(0) { rows[index].id = existing.id }
            }
        }
        var intent = WriteIntent.insert
        switch resolution {
        case .none: break
        case .mergeDuplicates: intent = .upsert
        case .ignoreDuplicates:
            intent = .insertIgnoringDuplicates
            let ids = rows.map(\.id.lowercasedText)
            let taken = try await storage.select(RowSelection(collection: collection, spaces: scope.readable, filter: .ids("id", ids), limit: ids.count))
            let takenIDs = Set(taken.records.indices.map(taken.records.id))
            rows.removeAll { takenIDs.contains($0.id.lowercasedText) }
        }
        let clock = HLC.server(now())
        let mutations = rows.enumerated().map { index, row in
            var clocks = row.fields.mapValues { _ in clock }
            clocks[RecordState.deletedKey] = clock
            return Mutation(
                mutationId: Int64(index + 1), space: row.space, collection: collection.name, id: row.id, op: .upsert, fields: row.fields, clocks: clocks
            )
        }
        try await commit(mutations, intent: intent, scope: scope)
        return try await written(ids: rows.map(\.id), collection: collection, plan: plan, query: query, scope: scope)
    }

    /// `PATCH`: writes `body`'s fields into every row `query` selects.
    func update(_ caller: TableCaller, table: String, body: [String: JSONValue], query: TableQuery) async throws -> Written {
        let collection = try writableCollection(table)
        let plan = try SelectPlan(query.select, collection: collection, schema: schema)
        var fields = try writtenFields(body, collection: collection, keeping: query.columns)
        let newID = try fields.removeValue(forKey: "id").map { try uuid($0, column: "id") }
        let newSpace = try fields.removeValue(forKey: "_space").map { try uuid($0, column: "_space") }
        let (_, targets, scope) = try await targets(caller, collection: collection, query: query)
        for target in targets {
            if let newID, newID != target.id {
                throw TableError(.invalidRequest, "23514", "A record's id never changes: \(collection.name) \(target.id.lowercasedText) keeps its id")
            }
            if let newSpace, newSpace != target.space {
                throw TableError(.invalidRequest, "23514", "A record never moves between spaces: write a new record in the other space, then delete this one")
            }
        }
        let clock = HLC.server(now())
        let mutations = targets.enumerated().map { index, target in
            Mutation(
                mutationId: Int64(index + 1), space: target.space, collection: collection.name, id: target.id, op: .upsert,
                fields: fields, clocks: fields.mapValues { _ in clock }
            )
        }
        try await commit(mutations, intent: .update, scope: scope)
        return try await written(ids: targets.map(\.id), collection: collection, plan: plan, query: query, scope: scope)
    }

    /// `DELETE`: tombstones every row `query` selects (and, as every delete, their children); returns the rows as
    /// they were.
    func delete(_ caller: TableCaller, table: String, query: TableQuery) async throws -> Written {
        let collection = try writableCollection(table)
        let plan = try SelectPlan(query.select, collection: collection, schema: schema)
        let (records, targets, scope) = try await targets(caller, collection: collection, query: query)
        let before = try await render(records.selecting(targets.map(\.record)), plan: plan, query: query, scope: scope)
        let clock = HLC.server(now())
        let mutations = targets.enumerated().map { index, target in
            Mutation(
                mutationId: Int64(index + 1), space: target.space, collection: collection.name, id: target.id, op: .delete,
                clocks: [RecordState.deletedKey: clock]
            )
        }
        try await commit(mutations, intent: .delete, scope: scope)
        return Written(rows: before, count: targets.count)
    }

    // MARK: - The rules every write shares

    /// A collection a table request may write: end-to-end encrypted ones hold ciphertext only devices can make.
    private func writableCollection(_ table: String) throws(TableError) -> CollectionDefinition {
        let collection = try collection(table)
        guard !collection.isEncrypted else {
            throw .forbidden(
                "\(collection.name) is end-to-end encrypted: the server never sees its plaintext, so only a device holding the space's key writes it",
                hint: "Write it through the SDK on a device; /rest/v1 reads its ciphertext."
            )
        }
        return collection
    }

    /// The body's columns, checked by name: the id, the space and the collection's fields (their values are checked by
    /// the push, after a timestamp's bare date is read as PostgreSQL would). `columns=` keeps only the columns it names.
    private func writtenFields(_ body: [String: JSONValue], collection: CollectionDefinition, keeping columns: [String]?) throws(TableError) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for (name, value) in body where columns?.contains(name) ?? true {
            let field = collection.field(named: name)
            guard name == "id" || name == "_space" || field != nil else {
                throw .unknownWrittenColumn(name, of: collection.name)
            }
            if field?.type == .timestamp, case .string(let text) = value {
                fields[name] = .string(Timestamp.readingBareDate(text))
            } else {
                fields[name] = value
            }
        }
        return fields
    }

    private func uuid(_ value: JSONValue, column: String) throws(TableError) -> UUID {
        guard let text = value.stringValue, let id = UUID(wireText: text) else {
            throw .invalidValue("invalid input syntax for type uuid: \(value.jsonText.prefix(40)) (column \(column))")
        }
        return id
    }

    /// Where an insert without `_space` goes: the user's personal space, whose id is theirs. A backend names it.
    private func personalSpace(of caller: TableCaller) throws(TableError) -> UUID {
        guard case .user(let userID) = caller else {
            throw TableError(
                .invalidRequest, "23502", "null value in column \"_space\" violates not-null constraint",
                hint: "The service role writes to every space, so each row names its _space (a user's personal space id is the user's id)."
            )
        }
        return userID
    }

    /// `on_conflict`'s columns: `id`, or exactly the columns of one of the collection's unique keys.
    private func conflictColumns(_ columns: [String]?, collection: CollectionDefinition) throws(TableError) -> [String]? {
        guard let columns else { return nil }
        if columns == ["id"] { return columns }
        guard collection.uniqueKeys.contains(where: { Set($0) == Set(columns) }) else {
            throw TableError(
                .invalidRequest, "42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                hint: "on_conflict names id or one of \(collection.name)'s unique keys (the schema's unique:)."
            )
        }
        return columns
    }

    /// The caller's spaces for a write to `spaces`: a user's (a space they are not in is refused by the push), or for
    /// the service role each named space as owner, refusing one that does not exist.
    private func writeScope(_ caller: TableCaller, spaces: Set<UUID>) async throws -> Scope {
        guard caller == .serviceRole else { return try await scope(of: caller) }
        let found = try await storage.spaces(ids: Array(spaces))
        if let missing = spaces.subtracting(found.map(\.id)).first {
            throw TableError(.conflict, "23503", "Space \(missing.lowercasedText) does not exist", hint: "_space names an existing space (a user's personal space id is the user's id).")
        }
        return Scope(caller: caller, spaces: found)
    }

    /// The live rows a `PATCH` or `DELETE` matches in the caller's spaces (others are invisible to it, as under
    /// row-level security), each in a space where the caller may write.
    /// A row a `PATCH` or `DELETE` changes.
    struct Target {
        /// The record's index among those read.
        var record: Int
        var id: UUID
        var space: UUID
    }

    private func targets(
        _ caller: TableCaller, collection: CollectionDefinition, query: TableQuery
    ) async throws -> (TableRecords, [Target], Scope) {
        var scope = try await scope(of: caller)
        var selection = RowSelection(
            collection: collection, spaces: scope.readable, filter: query.filter, order: query.order, limit: limits.maximumWrittenRows + 1
        )
        if let limit = query.limit { selection.limit = min(limit, selection.limit) }
        let records = try await storage.select(selection).records
        guard records.count <= limits.maximumWrittenRows else { throw tooManyRows() }
        let found = records.indices.compactMap { record in records.ids(record).map { Target(record: record, id: $0.id, space: $0.space) } }
        if let roles = scope.spaces.map({ Dictionary($0.map { ($0.id, $0.role) }, uniquingKeysWith: { first, _ in first }) }),
           let target = found.first(where: { roles[$0.space]?.canWrite != true }) {
            throw TableError.forbidden("Your role in space \(target.space.lowercasedText) is \(roles[target.space]?.rawValue ?? "none"), which cannot write")
        }
        if caller == .serviceRole { scope = try await writeScope(caller, spaces: Set(found.map(\.space))) }
        return (records, found, scope)
    }

    private func tooManyRows() -> TableError {
        TableError(
            .invalidRequest, "54000", "One request writes at most \(limits.maximumWrittenRows) rows",
            hint: "Send the rows in several requests, or narrow the filter."
        )
    }

    /// Pushes the mutations as one statement, turning a refusal into PostgREST's error for it.
    private func commit(_ mutations: [Mutation], intent: WriteIntent, scope: Scope) async throws {
        guard !mutations.isEmpty else { return }
        let userID = if case .user(let id) = scope.caller { id } else { Self.serviceRoleUserID }
        do {
            _ = try await sync.commitStatement(mutations, intent: intent, userID: userID, spaces: scope.spaces ?? [])
        } catch PushPlan.Refusal.rejected(_, let rejection) {
            throw TableError(rejection)
        }
    }

    /// The user a service-role write is made as: no one (it names no device and no profile).
    static let serviceRoleUserID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The rows `ids` as `plan` shows them after a write, in the order of `ids` (rows the write left out are absent).
    private func written(ids: [UUID], collection: CollectionDefinition, plan: SelectPlan, query: TableQuery, scope: Scope) async throws -> Written {
        guard !ids.isEmpty else { return Written(rows: TableRows(), count: 0) }
        let selection = RowSelection(collection: collection, spaces: scope.readable, filter: .ids("id", ids.map(\.lowercasedText)), limit: ids.count)
        let found = try await storage.select(selection).records
        let byID = Dictionary(found.indices.map { (found.id($0), $0) }, uniquingKeysWith: { first, _ in first })
        let ordered = ids.compactMap { byID[$0.lowercasedText] }
        return Written(rows: try await render(found.selecting(ordered), plan: plan, query: query, scope: scope), count: ordered.count)
    }
}

extension TableError {
    /// A push's rejection of a table write, as the PostgreSQL error the same statement would have met.
    init(_ rejection: Rejection) {
        switch rejection.code {
        case .uniqueViolation: self.init(.conflict, "23505", "duplicate key value violates unique constraint", details: rejection.message)
        case .parentMissing: self.init(.conflict, "23503", "insert or update violates a parent link", details: rejection.message)
        case .invalidRecord where rejection.message.contains("required field"):
            self.init(.invalidRequest, "23502", "null value violates not-null constraint", details: rejection.message)
        case .typeMismatch, .invalidClock: self.init(.invalidRequest, "22P02", "invalid input syntax", details: rejection.message)
        case .unknownField, .unknownCollection: self.init(.invalidRequest, "PGRST204", rejection.message)
        case .forbiddenSpace, .spaceNotEncrypted, .spaceKeyMissing: self.init(.forbidden, "42501", rejection.message)
        case .spaceMismatch: self.init(.invalidRequest, "23514", rejection.message)
        case .recordTooLarge, .uniqueValueTooLong: self.init(.invalidRequest, "54000", rejection.message)
        case .blobMissing: self.init(.conflict, "23503", rejection.message)
        default: self.init(.invalidRequest, "22023", rejection.message)
        }
    }
}
