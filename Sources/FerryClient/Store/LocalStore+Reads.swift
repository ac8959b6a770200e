import FerryCore
import Foundation
import GRDB

/// Reading records: by id, by equality filters, and a parent's children.
extension LocalStore {
    /// Record `id` of `collection`, or `nil` when it does not exist or is deleted (unless `includeDeleted`).
    public func fetch(collection name: String, id: UUID, includeDeleted: Bool = false) throws -> LocalRecord? {
        let collection = try self.collection(named: name)
        return try read { db in
            guard let record = try loadRecord(db, collection, id: id), includeDeleted || !record.isDeleted else { return nil }
            return try withSyncState(db, record)
        }
    }

    /// The live records of `collection` whose fields equal `filter`'s values (every record when it is empty), in id order.
    ///
    /// - Throws: ``StoreError`` `unknown_field` or `type_mismatch` for a filter that cannot match.
    public func fetchAll(collection name: String, where filter: [String: JSONValue] = [:]) throws -> [LocalRecord] {
        let collection = try self.collection(named: name)
        let (sql, arguments) = try filterClause(filter, in: collection)
        return try read { db in
            try loadRecords(db, collection, where: sql, arguments: arguments).map { try withSyncState(db, $0) }
        }
    }

    /// The live children of record `id` of `collection`, by child collection (only collections with children present).
    public func children(of name: String, id: UUID) throws -> [String: [LocalRecord]] {
        let parent = try self.collection(named: name)
        return try read { db in
            var result: [String: [LocalRecord]] = [:]
            for child in schema.collections {
                guard let link = child.parent, link.collection == parent.name else { continue }
                let records = try loadRecords(
                    db, child, where: "WHERE \(Self.quote(link.field)) = ? AND _deleted = 0", arguments: [Self.text(id)]
                )
                if !records.isEmpty { result[child.name] = try records.map { try withSyncState(db, $0) } }
            }
            return result
        }
    }

    /// `WHERE _deleted = 0 AND field = ? …` for an equality filter.
    func filterClause(_ filter: [String: JSONValue], in collection: CollectionDefinition) throws -> (String, StatementArguments) {
        var conditions = ["_deleted = 0"]
        var values: [DatabaseValue] = []
        for (name, value) in try normalize(filter, for: collection).sorted(by: { $0.key < $1.key }) {
            guard let field = collection.field(named: name) else { continue }
            if value.isNull {
                conditions.append("\(Self.quote(name)) IS NULL")
            } else {
                conditions.append("\(Self.quote(name)) = ?")
                values.append(try Self.databaseValue(value, for: field, in: collection))
            }
        }
        return ("WHERE " + conditions.joined(separator: " AND "), StatementArguments(values))
    }
}
