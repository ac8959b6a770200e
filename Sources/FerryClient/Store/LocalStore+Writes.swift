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
    ///   - space: the space of a new record (when `nil`: its parent's space for a child, else ``defaultSpace``);
    ///     an existing record keeps its own.
    ///   - fields: values in wire form; each is checked against its field's type.
    /// - Returns: the record as stored.
    /// - Throws: ``StoreError``: `unknown_collection`, `unknown_field`, `type_mismatch`, `missing_field`,
    ///   `no_space`, `space_mismatch`, `parent_missing`, `space_not_encrypted` (an encrypted collection in a space known to be plain).
    @discardableResult
    public func save(collection name: String, id: UUID? = nil, space: UUID? = nil, fields: [String: JSONValue]) throws -> LocalRecord {
        let collection = try self.collection(named: name)
        let normalized = try normalize(fields, for: collection)
        // A record created without an id gets a new one (`UUID.timeOrdered()`, time-ordered): nothing to look up.
        let isCreation = id == nil
        let id = id ?? UUID.timeOrdered()
        return try write { db in
            let existing = isCreation ? nil : try loadRecord(db, collection, id: id)
            // A child lives in its parent's space (the server refuses anything else): a new child without a
            // space goes there.
            var parentSpace: UUID?
            if let parent = collection.parent, let value = normalized[parent.field], !value.isNull {
                let parentCollection = try self.collection(named: parent.collection)
                guard let parentID = value.stringValue.flatMap(UUID.init(wireText:)),
                      let parentRecord = try loadRecord(db, parentCollection, id: parentID), !parentRecord.isDeleted else {
                    throw StoreError(code: .parentMissing, message: "No \(parent.collection) record \(value.stringValue ?? value.jsonText) for \(name).\(parent.field).")
                }
                parentSpace = parentRecord.space
            }
            let recordSpace: UUID
            if let existing {
                if let space, space != existing.space {
                    throw StoreError(code: .spaceMismatch, message: "Record \(Self.text(id)) belongs to space \(Self.text(existing.space)); a record never moves between spaces.")
                }
                recordSpace = existing.space
                // The server refuses a write that empties a required field (a parent link is one), and an undelete that
                // leaves one empty, as it does a new record: say so now.
                let emptied = collection.fields.filter { field in
                    guard field.isRequired else { return false }
                    if existing.isDeleted { return (normalized[field.name] ?? existing.fields[field.name] ?? .null).isNull }
                    return normalized[field.name]?.isNull == true && !(existing.fields[field.name] ?? .null).isNull
                }.map(\.name)
                if !emptied.isEmpty {
                    throw StoreError(code: .missingField, message: "'\(name)' requires \(emptied.joined(separator: ", ")): a save cannot empty them.")
                }
            } else {
                guard let chosen = space ?? parentSpace ?? defaultSpace else {
                    throw StoreError(code: .noSpace, message: "A new record needs a space: pass one, or open the store with a default space.")
                }
                recordSpace = chosen
                let missing = collection.fields.filter { $0.isRequired && (normalized[$0.name] ?? .null).isNull }.map(\.name)
                if !missing.isEmpty {
                    throw StoreError(code: .missingField, message: "A new '\(name)' record needs \(missing.joined(separator: ", ")).")
                }
            }
            if let parentSpace, parentSpace != recordSpace {
                throw StoreError(code: .spaceMismatch, message: "A \(name) record must be in its parent's space (\(Self.text(parentSpace))).")
            }
            if collection.isEncrypted, try isKnownPlain(db, recordSpace) {
                throw StoreError(
                    code: .spaceNotEncrypted,
                    message: "'\(name)' is end-to-end encrypted: write it into an encrypted space, not \(Self.text(recordSpace)) (the server would refuse it)."
                )
            }
            let isUndelete = existing?.isDeleted == true
            let changed = existing.map { record in
                record.isDeleted ? normalized : normalized.filter { record.fields[$0.key] ?? .null != $0.value }
            } ?? normalized
            if let existing, changed.isEmpty, !isUndelete {
                return try withSyncState(db, existing)
            }

            // Saved with the outbox entry below (see `loadClock`).
            var clock = try loadClock(db)
            let stamp = clock.tick(now: now())
            rememberClock(clock)
            var clocks = changed.mapValues { _ in stamp }
            if isUndelete { clocks[RecordState.deletedKey] = stamp }
            // A new record with no fields has no clock to carry the reading in its entry: save it here, or the
            // entry (the newest) would hide the readings of the entries before it.
            if clocks.isEmpty { try saveClock(db, clock) }

            var state = existing?.state ?? RecordState()
            state.merge(RecordState(fields: changed, clocks: clocks, isDeleted: false))
            let record = LocalRecord(
                collection: name, id: id, space: recordSpace, fields: state.fields, clocks: state.clocks,
                isDeleted: state.isDeleted, seq: existing?.seq ?? 0, updatedAt: now(), syncState: .pending
            )
            // A new record's clocks are its entry's: their text is made once, as is the time's.
            let clocksText = state.clocks == clocks ? ClockMap.text(clocks) : nil
            let time = Timestamp.format(now())
            try saveRecord(db, record, in: collection, updatedAt: time, clocksText: clocksText)
            if isUndelete { try forgetCascade(db, name, id) }
            try queueUploads(db, space: recordSpace, collection: collection, fields: changed)
            try appendToOutbox(db, Mutation(
                mutationId: 0, space: recordSpace, collection: name, id: id, op: .upsert, fields: changed, clocks: clocks
            ), clocksText: clocksText, createdAt: time)
            return record
        }
    }

    /// Deletes record `id` of `collection` and, as the server does, its children; queues the delete.
    ///
    /// The children are tombstoned locally with the same clock; the server cascades on its side, so only the
    /// parent's delete is pushed. Deleting a deleted record changes nothing.
    /// - Throws: ``StoreError`` `record_not_found` when the record does not exist.
    public func delete(collection name: String, id: UUID) throws {
        let collection = try self.collection(named: name)
        try write { db in
            guard let existing = try loadRecord(db, collection, id: id) else {
                throw StoreError.notFound(name, Self.text(id))
            }
            if existing.isDeleted { return }
            // Saved with the outbox entry below (see `loadClock`).
            var clock = try loadClock(db)
            let stamp = clock.tick(now: now())
            rememberClock(clock)
            try tombstone(db, existing, in: collection, clock: stamp)
            try appendToOutbox(db, Mutation(
                mutationId: 0, space: existing.space, collection: name, id: id, op: .delete,
                clocks: [RecordState.deletedKey: stamp]
            ))
        }
    }

    /// Tombstones `record` with `clock` and hides its live descendants until the server confirms their fate.
    func tombstone(_ db: Database, _ record: LocalRecord, in collection: CollectionDefinition, clock: HLC) throws {
        var state = record.state
        if state.merge(RecordState(clocks: [RecordState.deletedKey: clock], isDeleted: true)) {
            var updated = record
            updated.fields = state.fields
            updated.clocks = state.clocks
            updated.isDeleted = state.isDeleted
            try saveRecord(db, updated, in: collection)
        }
        try hideChildren(db, of: record.id, in: collection)
    }

    /// Marks every live descendant of record `id` deleted, provisionally (see `ferry_cascades`).
    ///
    /// The device cascades a delete at once, as the server will; but whether the server cascades depends on
    /// whether the parent's delete wins there (a concurrent undelete with a later clock beats it). So the
    /// children get no clock of their own: the server's tombstones confirm them when pulled, and a pulled
    /// undelete of the parent brings them back.
    func hideChildren(_ db: Database, of id: UUID, in collection: CollectionDefinition) throws {
        for child in schema.collections {
            guard let link = child.parent, link.collection == collection.name else { continue }
            let children = try loadRecords(
                db, child, where: "WHERE \(Self.quote(link.field)) = ? AND _deleted = 0", arguments: [Self.text(id)]
            )
            for var record in children {
                record.isDeleted = true
                try saveRecord(db, record, in: child)
                try db.execute(
                    sql: "INSERT OR IGNORE INTO ferry_cascades (collection, record_id) VALUES (?, ?)",
                    arguments: [child.name, Self.text(record.id)]
                )
                try hideChildren(db, of: record.id, in: child)
            }
        }
    }

    /// Brings back the descendants of record `id` that only a local cascade had hidden.
    func restoreChildren(_ db: Database, of id: UUID, in collection: CollectionDefinition) throws {
        for child in schema.collections {
            guard let link = child.parent, link.collection == collection.name else { continue }
            let hidden = try loadRecords(
                db, child,
                where: "WHERE \(Self.quote(link.field)) = ? AND _deleted = 1 AND id IN (SELECT record_id FROM ferry_cascades WHERE collection = ?)",
                arguments: [Self.text(id), child.name]
            )
            for var record in hidden {
                record.isDeleted = false
                try saveRecord(db, record, in: child)
                try forgetCascade(db, child.name, record.id)
                try restoreChildren(db, of: record.id, in: child)
            }
        }
    }

    /// Whether a local cascade hid record `id` and the server has not confirmed it yet.
    func isHiddenByCascade(_ db: Database, _ collection: String, _ id: UUID) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_cascades WHERE collection = ? AND record_id = ?)",
            arguments: [collection, Self.text(id)]
        ) ?? false
    }

    func forgetCascade(_ db: Database, _ collection: String, _ id: UUID) throws {
        try db.execute(sql: "DELETE FROM ferry_cascades WHERE collection = ? AND record_id = ?", arguments: [collection, Self.text(id)])
    }

    /// `fields` checked against `collection` and put in canonical wire form.
    func normalize(_ fields: [String: JSONValue], for collection: CollectionDefinition) throws -> [String: JSONValue] {
        var normalized: [String: JSONValue] = [:]
        for (name, value) in fields {
            guard let field = collection.field(named: name) else {
                throw StoreError.unknownField(name, in: collection.name, known: collection.fields.map(\.name))
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
    static func text(_ id: UUID) -> String { id.lowercasedText }
}
