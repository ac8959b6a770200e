import FerryCore
import Foundation

/// A mutation that passed the checks that need no database: collection, fields, types, clocks, size, role.
///
/// A class, immutable: a push hands each one through several passes (the rows to read, the plan, the layout), and
/// copying a struct of a mutation, a collection definition and a state retained a dozen references each time (a
/// tenth of a push's CPU went to retains, releases and hashing of such copies).
final class ValidatedMutation: Sendable {
    let mutation: Mutation
    let collection: CollectionDefinition
    /// The state to merge, with normalized values and capped clocks.
    let state: RecordState
    /// Clocks the server lowered because they ran too far ahead, as stored.
    let cappedClocks: [String: HLC]
    /// Whether `state`'s clocks are exactly its fields' (and `_deleted`'s, when it has one): merged into a record never
    /// written, the state is then the record's whole, as ``RecordState/merge(_:)`` would leave it.
    let isWhole: Bool
    let key: RecordKey

    init(
        mutation: Mutation, collection: CollectionDefinition, state: RecordState, cappedClocks: [String: HLC],
        isWhole: Bool = false
    ) {
        self.mutation = mutation
        self.collection = collection
        self.state = state
        self.cappedClocks = cappedClocks
        self.isWhole = isWhole
        key = RecordKey(collection: collection.name, id: mutation.id)
    }
}

/// A mutation refused with a machine code and a message.
struct Rejection: Error, Sendable, Hashable {
    var code: ErrorCode
    var message: String

    init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
