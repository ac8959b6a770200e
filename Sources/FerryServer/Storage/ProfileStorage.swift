import FerryCore
import Foundation

/// The `profiles` system collection: one record per user, id = user id, in the user's personal space.
public protocol ProfileStorage: Sendable {
    /// The user's profile fields, or `nil` when there is no live profile record.
    func profile(userID: UUID, collection: CollectionDefinition) async throws -> [String: JSONValue]?
    /// Creates or updates the profile with `fields` (already normalized; absent fields are kept),
    /// bumping the personal space's sequence number in the same transaction; returns that number.
    @discardableResult
    func saveProfile(userID: UUID, collection: CollectionDefinition, fields: [String: JSONValue], now: Date) async throws -> Int64
    /// Tombstones the profile (as a sync delete would).
    func deleteProfile(userID: UUID, now: Date) async throws
}
