import FerryCore
import Foundation

/// Who a table request acts for: a signed-in user, within their spaces and roles, or a backend holding the
/// service-role key, in every space.
enum TableCaller: Sendable, Hashable {
    case user(UUID)
    case serviceRole
}

/// The rules of `/rest/v1`: PostgREST's reads and writes over the synced collections, as one more front-end over the
/// same records. Reads select live records of the caller's spaces; writes are pushes without a device
/// (``SyncService/commitStatement(_:intent:userID:spaces:)``), so they merge, take sequence numbers and poke streams
/// as a device's do.
struct TableService: Sendable {
    typealias Storage = TableStorage & SpaceStorage
    let storage: any Storage
    let schema: Schema
    let sync: SyncService
    var limits = TableLimits()
    var now: @Sendable () -> Date = Date.init

    /// The app collection `name` names; Ferry's system collections have endpoints of their own.
    func collection(_ name: String) throws(TableError) -> CollectionDefinition {
        guard let collection = schema.collection(named: name), !collection.isSystem else { throw .unknownTable(name) }
        return collection
    }

    /// The spaces a caller reaches: `nil` for every space (the service role).
    struct Scope: Sendable {
        var caller: TableCaller
        var spaces: [SpaceSummary]?

        var readable: [UUID]? { spaces?.map(\.id) }
    }

    func scope(of caller: TableCaller) async throws -> Scope {
        switch caller {
        case .user(let userID): Scope(caller: caller, spaces: try await storage.spaces(userID: userID))
        case .serviceRole: Scope(caller: caller, spaces: nil)
        }
    }

    /// A page of rows, as `plan` shows them, and the count of all the filter matches when `countsAll`.
    struct Page: Sendable {
        var rows: TableRows
        var offset: Int
        var total: Int?
    }

    /// `GET`: the rows `query` selects, at most ``TableLimits/maximumRows`` of them.
    func read(_ caller: TableCaller, table: String, query: TableQuery, countsAll: Bool) async throws -> Page {
        let collection = try collection(table)
        let plan = try SelectPlan(query.select, collection: collection, schema: schema)
        try plan.requireEmbedded(query)
        let scope = try await scope(of: caller)
        let offset = query.offset ?? 0
        let selection = RowSelection(
            collection: collection, spaces: scope.readable, filter: query.filter, order: query.order,
            limit: min(query.limit ?? limits.maximumRows, limits.maximumRows), offset: offset, countsAll: countsAll
        )
        let found = try await storage.select(selection)
        let rows = try await render(found.records, plan: plan, query: query, scope: scope)
        return Page(rows: rows, offset: offset, total: found.total)
    }

    /// The rows of `records` as `plan` shows them, embedded resources read a level at a time (one query per embedded
    /// resource and level, whatever the number of rows), each value written once into the reply's JSON.
    func render(_ records: TableRecords, plan: SelectPlan, query: TableQuery, scope: Scope) async throws -> TableRows {
        var budget = limits.maximumReplyBytes
        return try await render(records, plan: plan, query: query, scope: scope, budget: &budget)
    }

    /// As above, within `budget` bytes for every row rendered on the way, embedded resources' rows included (they are
    /// held while their parents copy them): past it the reply is refused before it is built.
    private func render(_ records: TableRecords, plan: SelectPlan, query: TableQuery, scope: Scope, budget: inout Int) async throws -> TableRows {
        guard !records.isEmpty else { return TableRows() }
        // Each embedded resource's rows, rendered, and which of them each record shows.
        var embeddings: [Int: Embedding] = [:]
        for (column, output) in plan.outputs.enumerated() {
            switch output.source {
            case .id, .space, .field: continue
            case .children(let collection, let link, let isOne, let childPlan, let path):
                let options = query.embedded[path] ?? TableQuery.EmbeddedOptions()
                let linkName = collection.fields[link].name
                // Ordered by the link first: each parent's children then come in the order asked for (or by id), and
                // SQLite walks the link's index instead of every record of the space, then a sort (twice the read).
                let order = [RowOrder(column: linkName)] + options.order
                let ids = records.indices.map(records.id)
                let children = try await embedded(collection, filters: [.ids(linkName, ids)] + options.filters, order: order, scope: scope)
                // Keyed by the cells' JSON text: a child's link and its parent's id are the same text, written alike.
                var byParent: [CellKey: [Int]] = [:]
                for child in children.indices {
                    let parent = children.field(child, link)
                    if parent.first == UInt8(ascii: "\"") { byParent[CellKey(parent), default: []].append(child) }
                }
                let rows = try await render(children, plan: childPlan, query: query, scope: scope, budget: &budget)
                embeddings[column] = Embedding(rows: rows, isOne: isOne, offset: options.offset ?? 0, limit: options.limit) { record in
                    byParent[CellKey(records.cell(record, 0))] ?? []
                }
            case .parent(let collection, let link, let parentPlan, let path):
                let options = query.embedded[path] ?? TableQuery.EmbeddedOptions()
                let ids = Set(records.indices.compactMap { records.link($0, link) })
                let parents = ids.isEmpty
                    ? TableRecords(fieldCount: collection.fields.count)
                    : try await embedded(collection, filters: [.ids("id", Array(ids))] + options.filters, order: [], scope: scope)
                let byID = Dictionary(parents.indices.map { (CellKey(parents.cell($0, 0)), $0) }, uniquingKeysWith: { first, _ in first })
                let rows = try await render(parents, plan: parentPlan, query: query, scope: scope, budget: &budget)
                embeddings[column] = Embedding(rows: rows, isOne: true) { record in
                    byID[CellKey(records.field(record, link))].map { [$0] } ?? []
                }
            }
        }
        let cells = plan.outputs.map { output -> Int? in
            switch output.source {
            case .id: 0
            case .space: 1
            case .field(let field): 2 + field
            case .children, .parent: nil
            }
        }
        var rows = TableRows()
        rows.reserve(min(records.text.count + records.count * plan.keys.reduce(2) { $0 + $1.count + 1 }, max(budget, 0)))
        for record in records.indices {
            // A request past its deadline was answered 503 and cancelled: stop building what nobody will read.
            if record & 63 == 63 { try Task.checkCancellation() }
            // Measured before it is written: a short select list can repeat a column (or embed a parent under every
            // child) until one row outgrows the server's memory.
            var size = 1 + cells.count
            for (column, cell) in cells.enumerated() {
                size += plan.keys[column].count + (cell.map { records.cell(record, $0).count } ?? embeddings[column]!.byteCount(for: record))
            }
            budget -= size + 1
            guard budget >= 0 else {
                throw TableError(
                    .invalidRequest, "54000", "The reply would be larger than \(limits.maximumReplyBytes >> 20) MiB",
                    hint: "Ask for fewer rows (limit, Range) or fewer columns, or limit the embedded resources."
                )
            }
            rows.append { json in
                json.append(UInt8(ascii: "{"))
                for (column, cell) in cells.enumerated() {
                    if column > 0 { json.append(UInt8(ascii: ",")) }
                    json.append(contentsOf: plan.keys[column])
                    if let cell {
                        json.append(contentsOf: records.cell(record, cell))
                    } else {
                        embeddings[column]!.write(for: record, into: &json)
                    }
                }
                json.append(UInt8(ascii: "}"))
            }
        }
        return rows
    }

    /// An embedded resource's rendered rows and which of them a record shows: an array of children, or one row (a
    /// parent, or a one-to-one child) or `null`.
    private struct Embedding {
        var rows: TableRows
        var isOne: Bool
        var offset = 0
        var limit: Int?
        var rowsOf: (Int) -> [Int]

        func write(for record: Int, into json: inout [UInt8]) {
            let shown = shownRows(of: record)
            if !isOne {
                rows.writeArray(shown, into: &json)
            } else if let first = shown.first {
                json.append(contentsOf: rows.row(first))
            } else {
                JSONValue.null.write(into: &json)
            }
        }

        /// The bytes ``write(for:into:)`` writes for `record`.
        func byteCount(for record: Int) -> Int {
            let shown = shownRows(of: record)
            if !isOne {
                return shown.reduce(1 + max(shown.count, 1)) { $0 + rows.row($1).count }
            }
            return shown.first.map { rows.row($0).count } ?? 4
        }

        private func shownRows(of record: Int) -> ArraySlice<Int> {
            let all = rowsOf(record)
            let start = min(offset, all.count)
            let end = limit.map { min(start + $0, all.count) } ?? all.count
            return all[start..<end]
        }
    }

    /// The records of an embedded resource, bounded: a reply that would embed more is refused, not cut silently.
    private func embedded(
        _ collection: CollectionDefinition, filters: [RowFilter], order: [RowOrder], scope: Scope
    ) async throws -> TableRecords {
        let selection = RowSelection(
            collection: collection, spaces: scope.readable, filter: .all(filters), order: order, limit: limits.maximumEmbeddedRows + 1
        )
        let found = try await storage.select(selection).records
        guard found.count <= limits.maximumEmbeddedRows else {
            throw TableError(
                .invalidRequest, "54000", "The reply would embed more than \(limits.maximumEmbeddedRows) \(collection.name) rows",
                hint: "Ask for fewer rows with limit, or limit the embedded resource (\(collection.name).limit=…)."
            )
        }
        return found
    }
}

/// A cell's JSON text as a dictionary key, hashed as one run of bytes: hashed byte by byte, a page's links cost a
/// twentieth of the read.
private struct CellKey: Hashable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (left: CellKey, right: CellKey) -> Bool {
        guard left.bytes.count == right.bytes.count else { return false }
        guard !left.bytes.isEmpty else { return true }
        return left.bytes.withUnsafeBytes { left in
            right.bytes.withUnsafeBytes { right in memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
    }
}

/// The bounds of a table request.
struct TableLimits: Sendable {
    /// The most rows a read returns, unless it asks for fewer (PostgREST's `db-max-rows`).
    var maximumRows = 1000
    /// The largest reply body (and each embedded resource's rows within it): a thousand rows of the largest records
    /// (256 KiB) would pass it, a page of ordinary ones does not come near.
    var maximumReplyBytes = 64 << 20
    /// The most rows one embedded resource may bring into a reply, across all its parents.
    var maximumEmbeddedRows = 20_000
    /// The most rows one write may change (an insert's body, or the rows a `PATCH` or `DELETE` matches): a push's.
    var maximumWrittenRows = 1000
}
