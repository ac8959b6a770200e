import FerryCore
import Foundation

/// A mutation that passed the checks that need no database: collection, fields, types, clocks, size, role.
struct ValidatedMutation: Sendable {
    var mutation: Mutation
    var collection: CollectionDefinition
    /// The state to merge, with normalized values and capped clocks.
    var state: RecordState
    /// Clocks the server lowered because they ran too far ahead, as stored.
    var cappedClocks: [String: HLC]
    /// `state.clocks` as ``ClockMap/text(_:)`` writes them, when the request carried exactly that text
    /// (``Mutation/receivedClocksText``) and the server changed none: a new record's `_clocks` column as it is.
    var clocksText: String? = nil
    var key: RecordKey { RecordKey(collection: collection.name, id: mutation.id) }
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
