import FerryCore
import Foundation

/// A space as the console lists it.
struct ConsoleSpace: Sendable, Hashable {
    var id: UUID
    var name: String
    var isEncrypted: Bool
    var isPersonal: Bool
    var members: Int
    var seq: Int64
    var createdAt: Date
    /// The last commit into it (`nil` before the first, or before the column existed).
    var changedAt: Date?
}

/// A device as the console lists it: with its owner's e-mail.
struct ConsoleDevice: Sendable, Hashable {
    var device: DeviceRecord
    var email: String
}

/// A page of a list and how many match in all.
struct ConsolePage<Item: Sendable>: Sendable {
    var items: [Item]
    var total: Int
}

/// What a bucket holds.
struct ConsoleBucketUsage: Sendable, Hashable {
    var bucket: String
    var objects: Int
    var bytes: Int64
}

/// The reads only the console makes: every account, space and device at once, searched and paged. `search` matches
/// part of the text, case-insensitively, as a bound value.
protocol ConsoleStorage: Sendable {
    func consoleUsers(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<UserRecord>
    func consoleSessions(userID: UUID) async throws -> [SessionRecord]
    func consoleSpaces(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<ConsoleSpace>
    func consoleSpace(id: UUID) async throws -> ConsoleSpace?
    func consoleDevices(search: String?, offset: Int, limit: Int) async throws -> ConsolePage<ConsoleDevice>
    /// Accounts, spaces and devices (revoked ones included).
    func consoleCounts() async throws -> (users: Int, spaces: Int, devices: Int)
    /// Live records and tombstones of `collection`, in `space` or in all.
    func consoleRecordCounts(_ collection: CollectionDefinition, space: UUID?) async throws -> (live: Int, deleted: Int)
    /// One record, tombstone or not, with its clocks and sequence number.
    func consoleRecord(_ collection: CollectionDefinition, id: UUID) async throws -> (seq: Int64, record: StoredRecord)?
    /// The live records of `collection` whose `field` links to `parent`, newest first, at most `limit`, in one query.
    func consoleChildren(_ collection: CollectionDefinition, field: String, parent: UUID, limit: Int) async throws -> [(id: UUID, record: StoredRecord)]
    func consoleBuckets() async throws -> [ConsoleBucketUsage]
    func consoleObjects(bucket: String, search: String?, offset: Int, limit: Int) async throws -> ConsolePage<StoredObject>
}
