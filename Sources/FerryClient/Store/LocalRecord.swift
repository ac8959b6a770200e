import FerryCore
import Foundation

/// One record as the device holds it: its fields plus the sync metadata.
public struct LocalRecord: Sendable, Hashable {
    /// The collection's name.
    public var collection: String
    /// The record's id.
    public var id: UUID
    /// The space it belongs to.
    public var space: UUID
    /// Field values in wire form (absent = never written).
    public var fields: [String: JSONValue]
    /// The clock of each written field, `_deleted` included.
    public var clocks: [String: HLC]
    /// Whether it is a tombstone.
    public var isDeleted: Bool
    /// The server sequence number of the last pulled change (0 while only local).
    public var seq: Int64
    /// When the device last wrote or applied it.
    public var updatedAt: Date?
    /// Whether local edits wait in the outbox, or the server rejected one.
    public var syncState: RecordSyncState

    /// Creates a record value.
    public init(
        collection: String, id: UUID, space: UUID, fields: [String: JSONValue], clocks: [String: HLC] = [:],
        isDeleted: Bool = false, seq: Int64 = 0, updatedAt: Date? = nil, syncState: RecordSyncState = .synced
    ) {
        self.collection = collection
        self.id = id
        self.space = space
        self.fields = fields
        self.clocks = clocks
        self.isDeleted = isDeleted
        self.seq = seq
        self.updatedAt = updatedAt
        self.syncState = syncState
    }

    /// The merge state of the record.
    var state: RecordState { RecordState(fields: fields, clocks: clocks, isDeleted: isDeleted) }
}

/// Where a record's local edits stand.
public enum RecordSyncState: Sendable, Hashable {
    /// Nothing waits: the server has every local edit.
    case synced
    /// Local edits wait in the outbox for the next push.
    case pending
    /// The server refused a local edit; ``StoreRejection`` says why. Newer edits may still be pending. The state stays
    /// until the app dismisses the refusal (``LocalStore/dismissRejections(_:)``), even after a later edit of the
    /// record syncs: the refused edit is still lost, and the user should hear of it once.
    case rejected(code: String, message: String)

    /// A short name: `synced`, `pending` or `rejected`.
    public var name: String {
        switch self {
        case .synced: "synced"
        case .pending: "pending"
        case .rejected: "rejected"
        }
    }
}
