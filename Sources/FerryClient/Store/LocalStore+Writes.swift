import FerryCore
import Foundation
import GRDB

/// Local writes: applied at once, and appended to the outbox in the same transaction.
extension LocalStore {
    /// Writes `fields` of record `id` in `collection`, creating the record when it is new, and queues the change.
    ///
    /// Only fields whose value differs from the stored one get a new clock (so an unchanged field never
    /// overrides another device's concurrent edit). Writing to a deleted record undeletes it.
    ///
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - id: the record's id; a new random one when `nil`.
    ///   - space: the space of a new record (``defaultSpace`` when `nil`); an existing record keeps its own.
    ///   - fields: values in wire form; each is checked against its field's type.
    /// - Returns: the record as stored.
    /// - Throws: ``StoreError``: `unknown_collection`, `unknown_field`, `type_mismatch`, `missing_field`,
    ///   `no_space`, `space_mismatch`, `parent_missing`.
    @discardableResult
    public func put(collection name: String, id: UUID? = nil, space: UUID? = nil, fields: [String: JSONValue]) throws -> LocalRecord {
        let collection = try self.collection(named: name)
        let normalized = try normalize(fields, for: collection)
        let id = id ?? UUID()
        return try write { db in
            let existing = try loadRecord(db, collection, id: id)
            let recordSpace: UUID
            if let existing {
                if let space, space != existing.space {
                    throw StoreError(code: .spaceMismatch, message: "Record \(Self.text(id)) belongs to space \(Self.text(existing.space)); a record never moves between spaces.")
                }
                recordSpace = existing.space
            } else {
                guard let chosen = space ?? defaultSpace else {
                    throw StoreError(code: .noSpace, message: "A new record needs a space: pass one, or open the store with a default space.")
                }
                recordSpace = chosen
                let missing = collection.fields.filter { $0.isRequired && (normalized[$0.name] ?? .null).isNull }.map(\.name)
                if !missing.isEmpty {
                    throw StoreError(code: .missingField, message: "A new '\(name)' record needs \(missing.joined(separator: ", ")).")
                }
            }
            if let parent = collection.parent, let value = normalized[parent.field], let parentID = value.stringValue.flatMap(UUID.init) {
                let parentCollection = try self.collection(named: parent.collection)
                guard let parentRecord = try loadRecord(db, parentCollection, id: parentID), !parentRecord.isDeleted else {
                    throw StoreError(code: .parentMissing, message: "No \(parent.collection) record \(Self.text(parentID)) for \(name).\(parent.field).")
                }
            }
            let isUndelete = existing?.isDeleted == true
            let changed = existing.map { record in
                record.isDeleted ? normalized : normalized.filter { record.fields[$0.key] ?? .null != $0.value }
            } ?? normalized
            if let existing, changed.isEmpty, !isUndelete {
                return try withSyncState(db, existing)
            }

            var clock = try loadClock(db)
            let stamp = clock.tick(now: now())
            try saveClock(db, clock)
            var clocks = changed.mapValues { _ in stamp }
            if isUndelete { clocks[RecordState.deletedKey] = stamp }

            var state = existing?.state ?? RecordState()
            state.merge(RecordState(fields: changed, clocks: clocks, isDeleted: false))
            let record = LocalRecord(
                collection: name, id: id, space: recordSpace, fields: state.fields, clocks: state.clocks,
                isDeleted: state.isDeleted, seq: existing?.seq ?? 0, updatedAt: now(), syncState: .pending
            )
            try saveRecord(db, record, in: collection)
            try appendToOutbox(db, Mutation(
                mutationId: 0, space: recordSpace, collection: name, id: id, op: .upsert, fields: changed, clocks: clocks
            ))
            return record
        }
    }

    /// Deletes record `id` of `collection` and, as the server does, its children; queues the delete.
    ///
    /// The children are tombstoned locally with the same clock; the server cascades on its side, so only the
    /// parent's delete is pushed. Deleting a deleted record changes nothing.
    /// - Throws: ``StoreError`` `record_not_found` when the record does not exist.
    public func remove(collection name: String, id: UUID) throws {
        let collection = try self.collection(named: name)
        try write { db in
            guard let existing = try loadRecord(db, collection, id: id) else {
                throw StoreError.notFound(name, Self.text(id))
            }
            if existing.isDeleted { return }
            var clock = try loadClock(db)
            let stamp = clock.tick(now: now())
            try saveClock(db, clock)
            try tombstone(db, existing, in: collection, clock: stamp)
            try appendToOutbox(db, Mutation(
                mutationId: 0, space: existing.space, collection: name, id: id, op: .delete,
                clocks: [RecordState.deletedKey: stamp]
            ))
        }
    }

    /// Tombstones `record` and, recursively, every live child of it, with `clock`.
    func tombstone(_ db: Database, _ record: LocalRecord, in collection: CollectionDefinition, clock: HLC) throws {
        var state = record.state
        if state.merge(RecordState(clocks: [RecordState.deletedKey: clock], isDeleted: true)) {
            var updated = record
            updated.fields = state.fields
            updated.clocks = state.clocks
            updated.isDeleted = state.isDeleted
            try saveRecord(db, updated, in: collection)
        }
        try tombstoneChildren(db, of: record.id, in: collection, clock: clock)
    }

    /// Tombstones every live child of record `id` (recursively) with `clock`.
    func tombstoneChildren(_ db: Database, of id: UUID, in collection: CollectionDefinition, clock: HLC) throws {
        for child in schema.collections {
            guard let link = child.parent, link.collection == collection.name else { continue }
            let children = try loadRecords(
                db, child, where: "WHERE \(Self.quote(link.field)) = ? AND _deleted = 0", arguments: [Self.text(id)]
            )
            for grandchild in children {
                try tombstone(db, grandchild, in: child, clock: clock)
            }
        }
    }

    /// `fields` checked against `collection` and put in canonical wire form.
    func normalize(_ fields: [String: JSONValue], for collection: CollectionDefinition) throws -> [String: JSONValue] {
        var normalized: [String: JSONValue] = [:]
        for (name, value) in fields {
            guard let field = collection.field(named: name) else {
                throw StoreError.unknownField(name, in: collection.name)
            }
            do {
                normalized[name] = try FieldValue.normalized(value, for: field)
            } catch {
                throw StoreError.typeMismatch(error, in: collection.name)
            }
        }
        return normalized
    }

    /// A UUID as Ferry writes it: lowercase.
    static func text(_ id: UUID) -> String { id.uuidString.lowercased() }
}
