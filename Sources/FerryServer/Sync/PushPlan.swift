import FerryCore
import Foundation

/// What a push does, decided in memory from the rows it touches (read inside the push's transaction),
/// so both engines share one merge, one cascade and one set of rules.
struct PushPlan: Sendable {
    /// A row to write, with the mutations that changed it (rejected together if the write fails).
    struct Write: Sendable {
        var key: RecordKey
        var collection: CollectionDefinition
        var record: StoredRecord
        var isNew: Bool
        var mutationIndexes: [Int]
    }

    /// One result per mutation of the request, in order.
    var results: [MutationResult]
    /// Rows to write, in the order they were first changed.
    var writes: [Write]
    /// The device's last processed mutation id after this push.
    var lastMutationID: Int64

    /// Rows the plan needs to read: each mutation's record and the parent it names.
    static func keysToLoad(_ entries: [Result<ValidatedMutation, Rejection>]) -> Set<RecordKey> {
        var keys = Set<RecordKey>()
        for case .success(let valid) in entries {
            keys.insert(valid.key)
            if let link = valid.collection.parent, let parentID = valid.state.fields[link.field]?.stringValue.flatMap(UUID.init(uuidString:)) {
                keys.insert(RecordKey(collection: link.collection, id: parentID))
            }
        }
        return keys
    }

    /// The records whose deletion may cascade: the targets of delete mutations.
    static func deleteRoots(_ entries: [Result<ValidatedMutation, Rejection>]) -> [RecordKey] {
        entries.compactMap { entry in
            guard case .success(let valid) = entry, valid.mutation.op == .delete else { return nil }
            return valid.key
        }
    }

    /// Plans the push.
    /// - Parameters:
    ///   - entries: each mutation validated, in request order.
    ///   - previousMutationID: the device's last processed id before this push.
    ///   - loaded: the stored rows of ``keysToLoad(_:)`` and every stored descendant of ``deleteRoots(_:)``.
    ///   - children: for each loaded row, its stored children.
    init(
        entries: [Result<ValidatedMutation, Rejection>], mutationIDs: [Int64], previousMutationID: Int64,
        loaded: [RecordKey: StoredRecord], children: [RecordKey: [RecordKey]], schema: Schema
    ) {
        var planner = Planner(rows: loaded, storedChildren: children, childLinks: schema.childLinks, schema: schema)
        var results: [MutationResult] = []
        var last = previousMutationID
        for (index, entry) in entries.enumerated() {
            let id = mutationIDs[index]
            guard id > previousMutationID else {
                results.append(MutationResult(mutationId: id, status: .duplicate))
                continue
            }
            last = id
            switch entry {
            case .failure(let rejection):
                results.append(MutationResult(mutationId: id, status: .rejected, code: rejection.code.rawValue, message: rejection.message))
            case .success(let valid):
                if let rejection = planner.apply(valid, index: index) {
                    results.append(MutationResult(mutationId: id, status: .rejected, code: rejection.code.rawValue, message: rejection.message))
                } else {
                    var result = MutationResult(mutationId: id, status: .applied)
                    result.clocks = valid.cappedClocks.isEmpty ? nil : valid.cappedClocks
                    results.append(result)
                }
            }
        }
        self.results = results
        self.writes = planner.order.compactMap { key in
            guard let record = planner.rows[key], let collection = schema.collection(named: key.collection) else { return nil }
            return Write(key: key, collection: collection, record: record, isNew: loaded[key] == nil, mutationIndexes: planner.contributors[key] ?? [])
        }
        self.lastMutationID = last
    }
}

extension PushPlan {
    /// Turns the results of the mutations behind `write` into rejections (its row could not be written).
    mutating func reject(_ write: Write, _ code: ErrorCode, _ message: String) {
        for index in write.mutationIndexes where results[index].status == .applied {
            results[index] = MutationResult(mutationId: results[index].mutationId, status: .rejected, code: code.rawValue, message: message)
        }
    }
}

/// The in-memory rows a plan changes.
private struct Planner {
    var rows: [RecordKey: StoredRecord]
    let storedChildren: [RecordKey: [RecordKey]]
    let childLinks: [String: [(collection: CollectionDefinition, field: String)]]
    let schema: Schema
    var order: [RecordKey] = []
    var contributors: [RecordKey: [Int]] = [:]

    init(rows: [RecordKey: StoredRecord], storedChildren: [RecordKey: [RecordKey]], childLinks: [String: [(collection: CollectionDefinition, field: String)]], schema: Schema) {
        self.rows = rows
        self.storedChildren = storedChildren
        self.childLinks = childLinks
        self.schema = schema
    }

    /// Merges one mutation; returns why it was refused, or `nil` when applied.
    mutating func apply(_ valid: ValidatedMutation, index: Int) -> Rejection? {
        let key = valid.key
        let existing = rows[key]
        if let existing, existing.space != valid.mutation.space {
            return Rejection(.spaceMismatch, "Record \(key.id.lowercased) belongs to space \(existing.space.lowercased); records never move between spaces.")
        }
        var record = existing ?? StoredRecord(space: valid.mutation.space, state: RecordState())
        let changed = record.state.merge(valid.state)
        if let link = valid.collection.parent, !record.state.isDeleted,
           existing == nil || existing?.state.fields[link.field] != record.state.fields[link.field] {
            if let rejection = checkParent(of: record, link: link) { return rejection }
        }
        if existing == nil, !record.state.isDeleted,
           let missing = valid.collection.fields.first(where: { $0.isRequired && (record.state.fields[$0.name] ?? .null).isNull }) {
            return Rejection(.invalidRecord, "A new \(valid.collection.name) record needs the required field '\(missing.name)'.")
        }
        guard changed else { return nil }
        mark(key, record, contributor: index)
        // Cascade whenever the parent's delete clock moves forward, not only on its first delete: after two
        // concurrent deletes every child then carries the later clock, whichever delete arrived first.
        if record.state.isDeleted, let clock = record.state.clocks[RecordState.deletedKey],
           existing?.state.clocks[RecordState.deletedKey] != clock {
            cascade(from: key, clock: clock, contributor: index)
        }
        return nil
    }

    private func checkParent(of record: StoredRecord, link: CollectionDefinition.ParentLink) -> Rejection? {
        guard let value = record.state.fields[link.field], !value.isNull else { return nil }
        guard let parentID = value.stringValue.flatMap(UUID.init(uuidString:)),
              let parent = rows[RecordKey(collection: link.collection, id: parentID)], !parent.state.isDeleted
        else {
            return Rejection(.parentMissing, "The \(link.collection) record named by \(link.field) does not exist or was deleted.")
        }
        guard parent.space == record.space else {
            return Rejection(.spaceMismatch, "A child must be in its parent's space (\(parent.space.lowercased)).")
        }
        return nil
    }

    private mutating func mark(_ key: RecordKey, _ record: StoredRecord, contributor: Int) {
        if contributors[key] == nil { order.append(key) }
        rows[key] = record
        contributors[key, default: []].append(contributor)
    }

    /// Tombstones every descendant of `key` with the parent's delete clock (unless a later undelete holds).
    private mutating func cascade(from key: RecordKey, clock: HLC, contributor: Int) {
        var pending = [key]
        while let parent = pending.popLast() {
            for link in childLinks[parent.collection] ?? [] {
                var childKeys = Set(storedChildren[parent]?.filter { $0.collection == link.collection.name } ?? [])
                for (candidate, row) in rows where candidate.collection == link.collection.name
                    && row.state.fields[link.field]?.stringValue.flatMap(UUID.init(uuidString:)) == parent.id {
                    childKeys.insert(candidate)
                }
                for childKey in childKeys.sorted(by: { $0.id.uuidString < $1.id.uuidString }) {
                    guard var child = rows[childKey] else { continue }
                    guard child.state.merge(RecordState(clocks: [RecordState.deletedKey: clock], isDeleted: true)) else { continue }
                    mark(childKey, child, contributor: contributor)
                    pending.append(childKey)
                }
            }
        }
    }
}
