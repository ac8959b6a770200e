import FerryCore
import Foundation

/// The console's view of the synced collections: every space's live records through the table API's reads (the same
/// selection, filters and order as `/rest/v1` with the service role), and one record whole — tombstone, clocks,
/// sequence number and children — from the sync storage. Encrypted fields show their ciphertext.
struct ConsoleRecords: Sendable {
    let console: ConsoleService
    let tables: TableService

    private var storage: any ConsoleStorage { console.storage }

    func collections() async throws -> JSONValue {
        var items: [JSONValue] = []
        for collection in console.schema.collections where !collection.isSystem {
            let counts = try await storage.consoleRecordCounts(collection, space: nil)
            items.append([
                "name": .string(collection.name),
                "fields": .array(collection.fields.map { ["name": .string($0.name), "type": .string($0.type.rawValue)] }),
                "parent": collection.parent.map { .string($0.collection) } ?? .null, "encrypted": .bool(collection.isEncrypted),
                "records": .number(Double(counts.live)), "deleted": .number(Double(counts.deleted)),
            ])
        }
        return ["items": .array(items)]
    }

    /// A page of live records, newest first unless `order` (`field.asc`, `field.desc`) says otherwise; `search` matches
    /// part of any text field the server can read.
    func records(_ name: String, page: ConsolePageRequest, order: String?, space: UUID?) async throws -> JSONValue {
        let collection = try Self.mapped { () throws(TableError) in try tables.collection(name) }
        var filters: [RowFilter] = []
        if let space { filters.append(.compare("_space", .eq, space.lowercasedText)) }
        if let search = page.search {
            let searchable = collection.fields.filter { $0.type == .text && !(collection.isEncrypted && collection.isSealed($0)) }
            // `*` is the table API's wildcard; the search's own are matched as they are.
            let pattern = "*\(search.replacingOccurrences(of: "*", with: ""))*"
            var matches: [RowFilter] = searchable.map { .compare($0.name, .ilike, pattern) }
            if UUID(wireText: search) != nil { matches.append(.compare("id", .eq, search.lowercased())) }
            // Nothing to match in: no record matches (an empty `any` would match them all).
            filters.append(matches.isEmpty ? .isValue("id", .null) : .any(matches))
        }
        let selection = RowSelection(
            collection: collection, spaces: nil, filter: filters.isEmpty ? nil : .all(filters), order: try Self.order(order, collection),
            limit: page.limit, offset: page.offset, countsAll: true, ordersBySyncColumns: true
        )
        let found: SelectedRows
        do {
            found = try await tables.storage.select(selection)
        } catch let error as TableError {
            throw ServiceError(error.kind, .validationFailed, error.message)
        }
        let records = found.records
        return ConsoleService.list(records.indices.map { record in
            var fields: [String: JSONValue] = ["id": .string(records.id(record)), "_space": .string(records.space(record))]
            for (field, value) in zip(collection.fields, records.values(record)) { fields[field.name] = value }
            return .object(fields)
        }, total: found.total ?? records.count)
    }

    /// One record, deleted or not, with its clocks, sequence number and up to 50 children per child collection.
    func record(_ name: String, id: UUID) async throws -> JSONValue {
        let collection = try Self.mapped { () throws(TableError) in try tables.collection(name) }
        guard let (seq, stored) = try await storage.consoleRecord(collection, id: id) else {
            throw ServiceError(.notFound, .notFound, "No \(collection.name) record has the id \(id.lowercasedText).")
        }
        var children: [JSONValue] = []
        for (child, field) in console.schema.childLinks[collection.name] ?? [] {
            let items: [JSONValue] = try await storage.consoleChildren(child, field: field, parent: id, limit: 50).map { childID, record in
                var fields = record.state.fields
                fields["id"] = .string(childID.lowercasedText)
                return .object(fields)
            }
            children.append(["collection": .string(child.name), "field": .string(field), "items": .array(items)])
        }
        var fields = stored.state.fields
        fields["id"] = .string(id.lowercasedText)
        return [
            "record": .object(fields), "space": .string(stored.space.lowercasedText), "seq": .number(Double(seq)),
            "deleted": .bool(stored.state.isDeleted), "clocks": .object(stored.state.clocks.mapValues { .string($0.description) }),
            "children": .array(children),
        ]
    }

    /// A table error as the console's (Ferry's error shape, not PostgREST's).
    private static func mapped<Value>(_ body: () throws(TableError) -> Value) throws -> Value {
        do {
            return try body()
        } catch {
            throw ServiceError(error.kind, error.kind == .notFound ? .unknownCollection : .validationFailed, error.message)
        }
    }

    /// `field.asc` / `field.desc`, or the last changed first (`_updated_at`: sequence numbers are per space, so they
    /// order one space's records only).
    static func order(_ text: String?, _ collection: CollectionDefinition) throws -> [RowOrder] {
        guard let text, !text.isEmpty else { return [RowOrder(column: SQLDialect.updatedAtColumn, descending: true)] }
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        let known = ["id", "_space", "_seq", SQLDialect.updatedAtColumn] + collection.fields.map(\.name)
        guard parts.count == 2, known.contains(parts[0]), ["asc", "desc"].contains(parts[1]) else {
            throw ServiceError(.invalidRequest, .validationFailed, "order is a column and a direction, as title.asc or title.desc.")
        }
        return [RowOrder(column: parts[0], descending: parts[1] == "desc")]
    }
}
