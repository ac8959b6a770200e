import FerryCore
import Foundation

/// Where a plan's rows go: how many sequence numbers each space hands out, and each row's place among them, grouped
/// as ``PostgresStorage`` writes them. A function of the plan alone, so a plan made before its transaction
/// (``SpeculativePush``) has its layout made there too, and the transaction only adds each space's first number.
struct WriteLayout: Sendable {
    /// A row's sequence number: the first its space hands this push, plus `offset` (rows take them in plan order).
    struct Slot: Sendable {
        var space: UUID
        var offset: Int64
    }

    /// Rows of one collection without unique keys, written with one statement.
    struct Batch: Sendable {
        var collection: CollectionDefinition
        var writes: [PushPlan.Write]
        var slots: [Slot]
    }

    /// Each space written, in id order (the order a push locks spaces in), with how many rows.
    private(set) var counts: [(space: UUID, count: Int64)] = []
    /// Rows of collections without unique keys, by collection in the order first written.
    private(set) var batches: [Batch] = []
    /// Rows of collections with unique keys, in plan order: each is written alone.
    private(set) var keyed: [(write: PushPlan.Write, slot: Slot)] = []

    init(_ plan: PushPlan) {
        var taken: [UUID: Int64] = [:]
        var spaces: [UUID] = []
        var batchIndex: [String: Int] = [:]
        for write in plan.writes {
            let space = write.record.space
            if taken[space] == nil { spaces.append(space) }
            let slot = Slot(space: space, offset: taken[space, default: 0])
            taken[space] = slot.offset + 1
            guard write.collection.uniqueKeys.isEmpty else {
                keyed.append((write, slot))
                continue
            }
            if let index = batchIndex[write.collection.name] {
                batches[index].writes.append(write)
                batches[index].slots.append(slot)
            } else {
                batchIndex[write.collection.name] = batches.count
                batches.append(Batch(collection: write.collection, writes: [write], slots: [slot]))
            }
        }
        counts = spaces.sorted { $0.uuidString < $1.uuidString }.map { ($0, taken[$0] ?? 0) }
    }
}

/// What a push reads under its locks, worked out before it takes them: the spaces to lock, in id order, and the ids
/// to load of each collection (each mutation's record and the parent it names).
struct PushReads: Sendable {
    let spaces: [UUID]
    let keys: [(collection: CollectionDefinition, ids: [UUID])]

    init(_ batch: PushBatch) {
        spaces = Set(batch.entries.compactMap { try? $0.get().mutation.space }).sorted { $0.uuidString < $1.uuidString }
        let toLoad = PushPlan.keysToLoad(batch.entries)
        keyCount = toLoad.count
        keys = Dictionary(grouping: toLoad, by: \.collection).sorted { $0.key < $1.key }.compactMap { name, group in
            batch.schema.collection(named: name).map { ($0, group.map(\.id)) }
        }
    }

    /// How many distinct records the push reads: each mutation's record and each parent it names.
    let keyCount: Int
}
