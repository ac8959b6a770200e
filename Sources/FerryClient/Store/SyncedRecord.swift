import Foundation

/// A model type stored in a collection: its coding keys are the collection's field names, `id` is the record id.
///
/// ```swift
/// struct Note: SyncedRecord {
///     static let collection = "notes"
///     var id: UUID
///     var sermon_id: UUID
///     var text: String
///     var timestamp: Double?
/// }
/// try store.save(Note(id: UUID(), sermon_id: sermon.id, text: "Key point", timestamp: 120.5))
/// ```
///
/// Dates travel as ISO 8601 timestamps and `Data` as base64, matching the `timestamp` and `blob` field types.
/// Optional properties that are `nil` clear their field.
public protocol SyncedRecord: Codable, Sendable, Identifiable where ID == UUID {
    /// The collection's name in the schema.
    static var collection: String { get }
}
