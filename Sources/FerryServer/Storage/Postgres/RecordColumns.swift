import FerryCore
import Foundation

/// Rows of one collection as a push binds them (``PostgresStorage/writeRecords(_:_:seqs:isNew:now:logger:)``): one
/// array per column, every column but `_seq`, which is numbered inside the transaction, once the space is locked.
///
/// Encoding is most of the server's own work in a write, and it depends on the rows alone, so a push whose plan was
/// made before its transaction (``SpeculativePush``) encodes them there too, outside the device's chain of pushes.
struct RecordColumns: Sendable {
    let collection: CollectionDefinition
    var ids: PostgresColumnArray
    var spaces: PostgresColumnArray
    var clocks: PostgresColumnArray
    var deleted: PostgresColumnArray
    var sealed: PostgresColumnArray
    var fields: [PostgresColumnArray]

    /// The columns of a plan's writes of one collection, in order; the values of a record in one of `sealedSpaces` go
    /// to `_sealed`.
    init(_ collection: CollectionDefinition, writes: some Collection<PushPlan.Write>, sealedSpaces: Set<UUID>) throws {
        self.collection = collection
        let count = writes.count
        let types = collection.fields.map { collection.storedType(of: $0) }
        ids = PostgresColumnArray(.uuid, capacity: count)
        spaces = PostgresColumnArray(.uuid, capacity: count)
        clocks = PostgresColumnArray(.text, capacity: count * 8)
        deleted = PostgresColumnArray(.bool, capacity: count)
        sealed = PostgresColumnArray(.json, capacity: count)
        fields = types.map { PostgresColumnArray(.init($0), capacity: count * 2) }
        for write in writes {
            let record = write.record
            ids.append(write.key.id)
            spaces.append(record.space)
            clocks.append(ClockCoding.encode(record.state))
            deleted.append(record.state.isDeleted)
            let (typed, sealedValues) = record.storageValues(in: collection, isSealed: sealedSpaces.contains(record.space))
            sealed.append(sealedValues)
            for (index, field) in collection.fields.enumerated() {
                try fields[index].append(SQLDialect.postgres.columnValue(typed[field.name] ?? .null, type: types[index]))
            }
        }
    }
}
