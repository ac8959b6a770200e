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
        return Page(rows: TableRows(rows: rows, plan: plan), offset: offset, total: found.total)
    }

    /// The rows of `records` as `plan` shows them, embedded resources read a level at a time (one query per embedded
    /// resource and level, whatever the number of rows).
    func render(_ records: [TableRecord], plan: SelectPlan, query: TableQuery, scope: Scope) async throws -> [TableRow] {
        guard !records.isEmpty else { return [] }
        var rows = Array(repeating: TableRow(), count: records.count)
        for index in rows.indices { rows[index].values.reserveCapacity(plan.outputs.count) }
        for output in plan.outputs {
            switch output.source {
            case .id:
                for index in records.indices { rows[index].values.append(.value(.string(records[index].id))) }
            case .space:
                for index in records.indices { rows[index].values.append(.value(.string(records[index].space))) }
            case .field(let field):
                for index in records.indices { rows[index].values.append(.value(records[index].values[field])) }
            case .children(let collection, let link, let isOne, let childPlan, let path):
                let options = query.embedded[path] ?? TableQuery.EmbeddedOptions()
                let linkName = collection.fields[link].name
                let children = try await embedded(collection, filters: [.ids(linkName, records.map(\.id))] + options.filters, order: options.order, scope: scope)
                let rendered = try await render(children, plan: childPlan, query: query, scope: scope)
                var byParent: [String: [TableRow]] = [:]
                for (child, row) in zip(children, rendered) {
                    guard let parent = child.link(link) else { continue }
                    byParent[parent, default: []].append(row)
                }
                for index in records.indices {
                    let all = byParent[records[index].id] ?? []
                    let start = min(options.offset ?? 0, all.count)
                    let end = options.limit.map { min(start + $0, all.count) } ?? all.count
                    let page = Array(all[start..<end])
                    rows[index].values.append(isOne ? .parent(page.first) : .children(page))
                }
            case .parent(let collection, let link, let parentPlan, let path):
                let options = query.embedded[path] ?? TableQuery.EmbeddedOptions()
                let ids = Set(records.compactMap { $0.link(link) })
                let parents = ids.isEmpty ? [] : try await embedded(collection, filters: [.ids("id", Array(ids))] + options.filters, order: [], scope: scope)
                let rendered = try await render(parents, plan: parentPlan, query: query, scope: scope)
                let byID = Dictionary(zip(parents.map(\.id), rendered), uniquingKeysWith: { first, _ in first })
                for index in records.indices {
                    rows[index].values.append(.parent(records[index].link(link).flatMap { byID[$0] }))
                }
            }
        }
        return rows
    }

    /// The records of an embedded resource, bounded: a reply that would embed more is refused, not cut silently.
    private func embedded(
        _ collection: CollectionDefinition, filters: [RowFilter], order: [RowOrder], scope: Scope
    ) async throws -> [TableRecord] {
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

/// The bounds of a table request.
struct TableLimits: Sendable {
    /// The most rows a read returns, unless it asks for fewer (PostgREST's `db-max-rows`).
    var maximumRows = 1000
    /// The most rows one embedded resource may bring into a reply, across all its parents.
    var maximumEmbeddedRows = 20_000
    /// The most rows one write may change (an insert's body, or the rows a `PATCH` or `DELETE` matches): a push's.
    var maximumWrittenRows = 1000
}
