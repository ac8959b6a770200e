import FerryClient
import Foundation

/// One record of the `notes` collection (notes.yaml). A `SyncedRecord`'s coding keys are the collection's field
/// names and `id` is the record id; dates travel as ISO 8601 timestamps, matching the `timestamp` type.
struct Note: SyncedRecord, Hashable {
    static let collection = "notes"

    var id: UUID
    var text: String
    var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id
        case text
        case updatedAt = "updated_at"
    }
}
