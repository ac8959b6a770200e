import FerryCore
import Foundation

/// Names one record: its collection and id.
struct RecordKey: Hashable, Sendable {
    var collection: String
    var id: UUID

    /// The id alone: it is random, so keys of two collections rarely share it, and a push's plan looks keys up a few
    /// times per row (hashing the collection's name too was a tenth of planning).
    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}

/// A record as the server holds it.
struct StoredRecord: Sendable, Hashable {
    /// The space it belongs to (it never moves).
    var space: UUID
    /// Fields, clocks and the tombstone.
    var state: RecordState
    /// The `_clocks` column as text ``ClockMap/wireText(_:)`` accepted, when it was read for a pull reply, which copies
    /// it; `state.clocks` is then left empty. Never set for a record that is merged.
    var clocksText: String? = nil
}

extension CollectionDefinition {
    /// The type a field's values have on the wire and in the database: ciphertext (bytes) in an
    /// encrypted collection, except the fields ``CollectionDefinition/isSealed(_:)`` leaves in clear.
    func storedType(of field: FieldDefinition) -> FieldType {
        isEncrypted && isSealed(field) ? .bytes : field.type
    }
}

extension Schema {
    /// Each collection's children: the collections whose parent link points at it, with the link field.
    var childLinks: [String: [(collection: CollectionDefinition, field: String)]] {
        var links: [String: [(collection: CollectionDefinition, field: String)]] = [:]
        for collection in collections {
            guard let parent = collection.parent else { continue }
            links[parent.collection, default: []].append((collection, parent.field))
        }
        return links
    }
}
