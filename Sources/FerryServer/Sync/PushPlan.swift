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
    /// The fingerprints of the mutations this push processes for the first time, which the device's batch rows keep
    /// (``ProcessedBatch``); empty for a push of replays only.
    var fingerprints: ProcessedBatch
    /// ``fingerprints`` with the refusals among ``results`` marked: what the batch row stores once the results are
    /// final, so a replay of a refused write is refused again rather than taken for applied.
    var recordedFingerprints: ProcessedBatch { fingerprints.marking(results) }
    /// The spaces where every row this push writes is a record one of its applied mutations names (no cascade
    /// tombstoned a child there): the pushing device holds each of those rows as the push leaves it.
    var spacesWithOnlyOwnWrites: Set<UUID>
    /// The mutations (by index) merged with a later change to one of their fields (the metrics' `merged` outcome, for
    /// those still applied once written).
    var conflicts: [Int] = []

    /// Why a push is refused whole, changing nothing.
    enum Refusal: Error, Sendable {
        /// The push reuses `mutationID`, an id the server processed for a different write (the device's store was
        /// reset or restored): the device numbers its waiting writes after `lastMutationID`.
        case staleMutationID(mutationID: Int64, lastMutationID: Int64)
        /// The push follows mutation `follows`, which is not the device's last processed id (the push it was sent
        /// behind has not committed, or never will): the device sends it again once that push is answered.
        case outOfOrder(follows: Int64, lastMutationID: Int64)
        /// A table request's mutation at `index` was rejected, so the request, which holds together, wrote nothing.
        case rejected(index: Int, Rejection)
    }

    /// Refuses a table request's push (``WriteIntent/isStatement``) once any of its mutations was rejected, planning or
    /// writing, so that its transaction rolls back: a statement writes all its rows or none.
    func requireWhole(_ batch: PushBatch) throws(Refusal) {
        guard batch.intent.isStatement, let index = results.firstIndex(where: { $0.status == .rejected }) else { return }
        let result = results[index]
        throw .rejected(index: index, Rejection(ErrorCode(rawValue: result.code ?? ErrorCode.invalidRecord.rawValue), result.message ?? ""))
    }

    /// Refuses a push sent behind another (``PushBatch/follows``) unless that one is the last the device's progress
    /// row records: overtaking it would, say, apply a child before the push that creates its parent. Checked before
    /// the push reads its rows.
    static func requireOrder(_ batch: PushBatch, previousMutationID: Int64) throws(Refusal) {
        if let follows = batch.follows, follows != previousMutationID {
            throw .outOfOrder(follows: follows, lastMutationID: previousMutationID)
        }
    }

    /// Whether the push carries an id the device processed before, so that its fingerprints must be read to tell a
    /// replay from a reused id; a push of fresh ids alone never reads them.
    static func needsProcessed(_ batch: PushBatch, previousMutationID: Int64) -> Bool {
        batch.mutationIDs.contains { $0 <= previousMutationID }
    }

    /// Rows the plan needs to read: each mutation's record and the parent it names.
    static func keysToLoad(_ entries: [Result<ValidatedMutation, Rejection>]) -> Set<RecordKey> {
        var keys = Set<RecordKey>()
        for case .success(let valid) in entries {
            keys.insert(valid.key)
            if let link = valid.collection.parent, let parentID = valid.state.fields[link.field]?.stringValue.flatMap(UUID.init(wireText:)) {
                keys.insert(RecordKey(collection: link.collection, id: parentID))
            }
        }
        return keys
    }

    /// The records whose deletion may cascade, with their space: the targets of delete mutations.
    static func deleteRoots(_ entries: [Result<ValidatedMutation, Rejection>]) -> [(key: RecordKey, space: UUID)] {
        entries.compactMap { entry in
            guard case .success(let valid) = entry, valid.mutation.op == .delete else { return nil }
            return (valid.key, valid.mutation.space)
        }
    }

    /// Plans the push.
    ///
    /// Mutations merge in order; then every live record the push wrote must satisfy the parent, space and
    /// required-field rules as merged, whatever the order of the mutations that made it (a delete, an upsert under a
    /// foreign parent and an undelete in one push are judged by the record they leave). A record that breaks a rule
    /// refuses every mutation that contributed to it, and the push is planned again without them, until all hold.
    /// - Parameters:
    ///   - batch: the push, each mutation validated, in request order.
    ///   - previousMutationID: the device's last processed id before this push.
    ///   - processed: the fingerprints of the device's most recently processed mutations, read only when the push
    ///     carries an id at or below `previousMutationID` (``needsProcessed(_:previousMutationID:)``).
    ///   - loaded: the stored rows of ``keysToLoad(_:)`` and every stored descendant of ``deleteRoots(_:)``.
    ///   - children: for each loaded row, its stored children in its space.
    init(
        _ batch: PushBatch, previousMutationID: Int64, processed: ProcessedBatch,
        loaded: [RecordKey: StoredRecord], children: [RecordKey: [RecordKey]]
    ) throws(Refusal) {
        let (entries, mutationIDs, fingerprints, schema) = (batch.entries, batch.mutationIDs, batch.fingerprints, batch.schema)
        var fresh: [Int] = []
        var appended = ProcessedBatch()
        var refusedBefore: [Int: ErrorCode] = [:]
        for (index, id) in mutationIDs.enumerated() {
            if id > previousMutationID {
                fresh.append(index)
                appended.append(id, fingerprints[index])
                continue
            }
            // A replay only if this very write was processed; otherwise the id was reused.
            guard let entry = processed.entry(of: id), entry.fingerprint == fingerprints[index] else {
                throw .staleMutationID(mutationID: id, lastMutationID: previousMutationID)
            }
            refusedBefore[index] = entry.rejection
        }
        var refused: [Int: Rejection] = [:]
        for index in fresh {
            if case .failure(let rejection) = entries[index] { refused[index] = rejection }
        }
        var planner: Planner
        repeat {
            planner = Planner(
                rows: loaded, capacity: fresh.count, storedChildren: children, childLinks: schema.childLinks, schema: schema,
                intent: batch.intent
            )
            for index in fresh where refused[index] == nil {
                guard case .success(let valid) = entries[index] else { continue }
                if let rejection = planner.apply(valid, index: index) { refused[index] = rejection }
            }
            let broken = planner.brokenRecords(stored: loaded)
            for (key, rejection) in broken {
                for index in planner.contributors(of: key) where refused[index] == nil { refused[index] = rejection }
            }
            if broken.isEmpty { break }
        } while true
        self.results = mutationIDs.enumerated().map { index, id in
            guard id > previousMutationID else {
                // A replay of a refused write is refused again: its device may have lost the first answer.
                guard let code = refusedBefore[index] else { return MutationResult(mutationId: id, status: .duplicate) }
                return MutationResult(
                    mutationId: id, status: .rejected, code: code.rawValue,
                    message: "This write was refused (\(code.rawValue)) when it was first pushed; it is sent again, and refused again."
                )
            }
            if let rejection = refused[index] {
                return MutationResult(mutationId: id, status: .rejected, code: rejection.code.rawValue, message: rejection.message)
            }
            var result = MutationResult(mutationId: id, status: .applied)
            if case .success(let valid) = entries[index], !valid.cappedClocks.isEmpty { result.clocks = valid.cappedClocks }
            return result
        }
        self.writes = planner.order.compactMap { key in
            guard let record = planner.rows[key], let collection = schema.collection(named: key.collection) else { return nil }
            let indexes = planner.contributors(of: key)
            return Write(key: key, collection: collection, record: record, isNew: loaded[key] == nil, mutationIndexes: indexes)
        }
        self.conflicts = planner.conflicts
        self.lastMutationID = max(previousMutationID, mutationIDs.last ?? previousMutationID)
        self.fingerprints = appended
        var lowered = Set<UUID>()
        for index in fresh where refused[index] == nil {
            // A clock the server lowered may lose a merge the device's own clock won: the device pulls the row.
            if case .success(let valid) = entries[index], !valid.cappedClocks.isEmpty { lowered.insert(valid.mutation.space) }
        }
        // Every row the plan writes was changed by a mutation that names it or by a cascade. A cascade may also
        // tombstone a record the push names (created, then its parent deleted, in one push): the device hid that child
        // without a clock, so it must pull the server's tombstone.
        var spaces = Set<UUID>()
        var cascaded = Set<UUID>()
        for index in writes.indices {
            spaces.insert(writes[index].record.space)
            if !planner.cascaded.isEmpty, planner.cascaded.contains(writes[index].key) { cascaded.insert(writes[index].record.space) }
        }
        self.spacesWithOnlyOwnWrites = spaces.subtracting(cascaded).subtracting(lowered)
    }
}

extension PushPlan {
    /// How many rows the plan writes in each space. By index: a copy of a write retains its collection definition's
    /// every name.
    var rowsPerSpace: [UUID: Int64] {
        var counts: [UUID: Int64] = [:]
        for index in writes.indices { counts[writes[index].record.space, default: 0] += 1 }
        return counts
    }

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
    let intent: WriteIntent
    /// The rows changed, in the order they were first changed.
    var order: [RecordKey] = []
    /// Each changed row's place in `order`.
    private var slots: [RecordKey: Int] = [:]
    /// The first mutation that changed each row of `order`, and the others for the rows several changed: most rows
    /// have one, and an array each was an allocation per row.
    private var firstContributors: [Int] = []
    private var moreContributors: [Int: [Int]] = [:]
    /// The rows a delete's cascade changed.
    var cascaded = Set<RecordKey>()
    /// The mutations (by index) merged into a record that had changed a field of theirs later.
    var conflicts: [Int] = []

    /// `capacity`: how many rows the plan is likely to change (its mutations).
    init(
        rows: [RecordKey: StoredRecord], capacity: Int, storedChildren: [RecordKey: [RecordKey]],
        childLinks: [String: [(collection: CollectionDefinition, field: String)]], schema: Schema, intent: WriteIntent
    ) {
        self.intent = intent
        self.rows = rows
        // Room for a push's rows up front: growing rehashed every key (a tenth of planning a push of new records).
        self.rows.reserveCapacity(rows.count + capacity)
        slots.reserveCapacity(capacity)
        self.storedChildren = storedChildren
        self.childLinks = childLinks
        self.schema = schema
    }

    /// Merges one mutation; returns why it was refused, or `nil` when merged. The rules on the merged record are
    /// checked once every mutation has merged (``brokenRecords(stored:)``).
    mutating func apply(_ valid: ValidatedMutation, index: Int) -> Rejection? {
        let key = valid.key
        let existing = rows[key]
        if let existing, existing.space != valid.mutation.space {
            return Rejection(.spaceMismatch, "Record \(key.id.lowercasedText) belongs to another space; records never move between spaces.")
        }
        var record = existing ?? StoredRecord(space: valid.mutation.space, state: RecordState())
        let changed: Bool
        if intent.isStatement {
            let isLive = existing.map { !$0.state.isDeleted } ?? false
            switch intent {
            case .insert where isLive:
                return Rejection(.uniqueViolation, "A \(key.collection) record with id \(key.id.lowercasedText) already exists.")
            case .insertIgnoringDuplicates where isLive, .update where !isLive, .delete where !isLive:
                return nil
            default:
                changed = record.state.merge(existing.map { valid.state.arriving(after: $0.state, reviving: !isLive) } ?? valid.state)
            }
        } else if existing == nil, valid.isWhole {
            // What merging into a state never written leaves, without checking each field's clock again.
            record.state = valid.state
            changed = !valid.state.clocks.isEmpty
        } else {
            // A conflict: a field this mutation writes was changed later elsewhere, and the merge keeps that change.
            if let existing, valid.state.clocks.contains(where: { field, clock in existing.state.clocks[field].map { $0 > clock } ?? false }) {
                conflicts.append(index)
            }
            changed = record.state.merge(valid.state)
        }
        guard changed else { return nil }
        mark(key, record, contributor: index)
        // Cascade whenever the parent's delete clock moves forward, not only on its first delete: after two
        // concurrent deletes every child then carries the later clock, whichever delete arrived first.
        if record.state.isDeleted, let clock = record.state.clocks[RecordState.deletedKey],
           existing?.state.clocks[RecordState.deletedKey] != clock {
            cascade(from: key, space: record.space, clock: clock, contributor: index)
        }
        return nil
    }

    /// The live records this plan writes that break a rule as merged: a parent that is missing, deleted or in another
    /// space (checked when the record is new, revived or moved to another parent), or a required field empty (checked
    /// for every required field when the record is new or revived, otherwise for those the plan empties: a field that a
    /// newer schema made required may stay empty on an older record without blocking its other edits).
    func brokenRecords(stored: [RecordKey: StoredRecord]) -> [(RecordKey, Rejection)] {
        order.compactMap { key in
            guard let record = rows[key], !record.state.isDeleted, let collection = schema.collection(named: key.collection) else { return nil }
            let before = stored[key]
            let revived = before == nil || before?.state.isDeleted == true
            if let link = collection.parent, revived || before?.state.fields[link.field] != record.state.fields[link.field],
               let rejection = checkParent(of: record, link: link) {
                return (key, rejection)
            }
            let empty = collection.fields.first { field in
                field.isRequired && (record.state.fields[field.name] ?? .null).isNull
                    && (revived || !(before?.state.fields[field.name] ?? .null).isNull)
            }
            if let empty {
                let message = revived
                    ? "A new \(collection.name) record needs the required field '\(empty.name)'."
                    : "The required field '\(empty.name)' of a \(collection.name) record cannot be emptied."
                return (key, Rejection(.invalidRecord, message))
            }
            return nil
        }
    }

    private func checkParent(of record: StoredRecord, link: CollectionDefinition.ParentLink) -> Rejection? {
        guard let value = record.state.fields[link.field], !value.isNull else { return nil }
        guard let parentID = value.stringValue.flatMap(UUID.init(wireText:)),
              let parent = rows[RecordKey(collection: link.collection, id: parentID)], !parent.state.isDeleted
        else {
            return Rejection(.parentMissing, "The \(link.collection) record named by \(link.field) does not exist or was deleted.")
        }
        guard parent.space == record.space else {
            return Rejection(.spaceMismatch, "A child must be in its parent's space; the \(link.collection) record named by \(link.field) is in another one.")
        }
        return nil
    }

    /// The mutations that changed `key`'s row, in order.
    func contributors(of key: RecordKey) -> [Int] {
        guard let slot = slots[key] else { return [] }
        return [firstContributors[slot]] + (moreContributors[slot] ?? [])
    }

    private mutating func mark(_ key: RecordKey, _ record: StoredRecord, contributor: Int) {
        if let slot = slots[key] {
            moreContributors[slot, default: []].append(contributor)
        } else {
            slots[key] = order.count
            order.append(key)
            firstContributors.append(contributor)
        }
        rows[key] = record
    }

    /// Tombstones every descendant of `key` in its space with the parent's delete clock (unless a later undelete
    /// holds). Records of other spaces that name it are never touched: a child always lives in its parent's space.
    private mutating func cascade(from key: RecordKey, space: UUID, clock: HLC, contributor: Int) {
        var pending = [key]
        while let parent = pending.popLast() {
            for link in childLinks[parent.collection] ?? [] {
                var childKeys = Set(storedChildren[parent]?.filter { $0.collection == link.collection.name } ?? [])
                for (candidate, row) in rows where candidate.collection == link.collection.name && row.space == space
                    && row.state.fields[link.field]?.stringValue.flatMap(UUID.init(wireText:)) == parent.id {
                    childKeys.insert(candidate)
                }
                for childKey in childKeys.sorted(by: { $0.id.uuidString < $1.id.uuidString }) {
                    guard var child = rows[childKey], child.space == space else { continue }
                    guard child.state.merge(RecordState(clocks: [RecordState.deletedKey: clock], isDeleted: true)) else { continue }
                    mark(childKey, child, contributor: contributor)
                    cascaded.insert(childKey)
                    pending.append(childKey)
                }
            }
        }
    }
}
