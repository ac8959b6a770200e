import FerryCore
import Foundation
import GRDB

/// The typed API over ``SyncedRecord`` models.
extension LocalStore {
    /// Saves `record` (creating it when new) in `space` (``defaultSpace`` when `nil`; an existing record keeps its own).
    ///
    /// Only the fields whose values changed are written and pushed.
    public func save<Record: SyncedRecord>(_ record: Record, space: UUID? = nil) throws {
        let collection = try self.collection(named: Record.collection)
        var fields = try RecordCoding.fields(of: record, in: collection)
        if try fetch(collection: Record.collection, id: record.id, includeDeleted: true) == nil {
            fields = fields.filter { !$0.value.isNull }
        }
        try save(collection: Record.collection, id: record.id, space: space, fields: fields)
    }

    /// Deletes `record` and its children.
    public func delete<Record: SyncedRecord>(_ record: Record) throws {
        try delete(collection: Record.collection, id: record.id)
    }

    /// Deletes the record of `type` with `id`, and its children.
    public func delete<Record: SyncedRecord>(_ type: Record.Type, id: UUID) throws {
        try delete(collection: Record.collection, id: id)
    }

    /// The live record of `type` with `id`, or `nil`.
    public func fetch<Record: SyncedRecord>(_ type: Record.Type, id: UUID) throws -> Record? {
        try fetch(collection: Record.collection, id: id).map { try RecordCoding.decode(type, from: $0) }
    }

    /// The live records of `type` whose fields equal `filter`'s values, in id order.
    public func fetchAll<Record: SyncedRecord>(_ type: Record.Type, where filter: [String: JSONValue] = [:]) throws -> [Record] {
        try fetchAll(collection: Record.collection, where: filter).map { try RecordCoding.decode(type, from: $0) }
    }

    /// The live records of `type` matching `filter`, now and after every change to them (local or pulled).
    public func observeAll<Record: SyncedRecord>(_ type: Record.Type, where filter: [String: JSONValue] = [:]) throws -> RecordObservation<[Record]> {
        let collection = try self.collection(named: Record.collection)
        let (sql, arguments) = try filterClause(filter, in: collection)
        let observation = ValueObservation.tracking { db in
            try self.loadRecords(db, collection, where: sql, arguments: arguments).map { try RecordCoding.decode(type, from: $0) }
        }
        return RecordObservation(base: observation.values(in: writer))
    }

    /// The record of `type` with `id` (`nil` while it does not exist or is deleted), now and after every change.
    public func observe<Record: SyncedRecord>(_ type: Record.Type, id: UUID) throws -> RecordObservation<Record?> {
        let collection = try self.collection(named: Record.collection)
        let observation = ValueObservation.tracking { db -> Record? in
            guard let record = try self.loadRecord(db, collection, id: id), !record.isDeleted else { return nil }
            return try RecordCoding.decode(type, from: record)
        }
        return RecordObservation(base: observation.values(in: writer))
    }

    /// The number of local writes waiting for the server, now and after every change.
    public func observePendingCount() -> RecordObservation<Int> {
        let observation = ValueObservation.tracking { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ferry_outbox") ?? 0
        }
        return RecordObservation(base: observation.values(in: writer))
    }
}
