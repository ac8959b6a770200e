import Foundation

/// The body of `POST /sync/v1/pull`.
public struct PullRequest: Sendable, Hashable {
    /// The last sequence number seen per space; a space the user belongs to but that is missing here starts at 0.
    public var cursors: [UUID: Int64]
    /// The most changes to return (the server caps it).
    public var limit: Int?
    /// Spaces not to pull this time (say, an encrypted space whose key this device does not hold yet);
    /// they get no changes and no cursor in the reply.
    public var exclude: Set<UUID>
    /// How the reply spells each change's clocks (``ClockForm``); the SDK asks for ``ClockForm/row``.
    public var clockForm: ClockForm
    /// How the reply lays its changes out (``PullLayout``).
    public var layout: PullLayout

    /// Creates a pull.
    public init(cursors: [UUID: Int64] = [:], limit: Int? = nil, exclude: Set<UUID> = [], clockForm: ClockForm = .field, layout: PullLayout = .changes) {
        self.cursors = cursors
        self.limit = limit
        self.exclude = exclude
        self.clockForm = clockForm
        self.layout = layout
    }
}

/// How a pull reply lays out its changes (docs/sync.md, "The rows layout").
public enum PullLayout: String, Sendable, Hashable, Codable {
    /// `changes`: one JSON object per change, naming its space, collection and fields.
    case changes
    /// `pages`: per run of changes of one space and collection, the column names once and each change as an array
    /// of values in that order. The same changes, in the same order, in half the bytes; a JSON parser builds one
    /// array per change instead of two objects (a third of the time in Python's `json`).
    case rows
}

/// How a pull reply spells each change's clocks (docs/sync.md, "Row clocks").
public enum ClockForm: String, Sendable, Hashable, Codable {
    /// `clocks` holds every clock: one per written field, and `_deleted`'s.
    case field
    /// `clock` is the clock of every field in `fields` that has no entry in `clocks`, which holds the others. Most
    /// records are written whole by one device, so their clocks are one `clock` and no `clocks`: 40 % fewer bytes
    /// in a pull of five-field records, and 30 % less work for a client reading them. A change whose fields do not all have a clock keeps the field
    /// form (no `clock`).
    case row
}

/// One record's current state, as a pull returns it.
public struct Change: Sendable, Hashable {
    /// The record's space.
    public var space: UUID
    /// The collection's name.
    public var collection: String
    /// The record's id.
    public var id: UUID
    /// The sequence number of the commit that last changed the record, within its space.
    public var seq: Int64
    /// Every field's value.
    public var fields: [String: JSONValue]
    /// Every written field's clock, `_deleted` included.
    public var clocks: [String: HLC] {
        get { parsedClocks ?? clocksText.flatMap(ClockMap.clocks(fromText:)) ?? [:] }
        set { (parsedClocks, clocksText) = (newValue, nil) }
    }
    /// Whether the record is a tombstone.
    public var deleted: Bool

    private var parsedClocks: [String: HLC]?
    /// The clocks as JSON text, when the change was made from such text and parsing it again gives ``clocks``: a
    /// server's pull reply copies the text it read from its database (parsing it only to write it again was a quarter
    /// of the server's work in a pull), and a device stores a new record's clocks as the text it received.
    public private(set) var clocksText: String?

    /// Keeps `text`, which a reader parsed into this change's clocks, beside them.
    mutating func keepClocksText(_ text: String?) {
        clocksText = text
    }

    /// Creates a change.
    public init(space: UUID, collection: String, id: UUID, seq: Int64, fields: [String: JSONValue], clocks: [String: HLC], deleted: Bool) {
        self.space = space
        self.collection = collection
        self.id = id
        self.seq = seq
        self.fields = fields
        self.parsedClocks = clocks
        self.deleted = deleted
    }

    /// Creates a change whose clocks are `clocksText`, which ``ClockMap/wireText(_:)`` returned (parsed only if asked for).
    public init(space: UUID, collection: String, id: UUID, seq: Int64, fields: [String: JSONValue], clocksText: String, deleted: Bool) {
        self.space = space
        self.collection = collection
        self.id = id
        self.seq = seq
        self.fields = fields
        self.clocksText = clocksText
        self.deleted = deleted
    }

    public static func == (lhs: Change, rhs: Change) -> Bool {
        (lhs.space, lhs.collection, lhs.id, lhs.seq, lhs.deleted) == (rhs.space, rhs.collection, rhs.id, rhs.seq, rhs.deleted)
            && lhs.fields == rhs.fields && lhs.clocks == rhs.clocks
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(seq)
        hasher.combine(fields)
        hasher.combine(clocks)
    }

    /// The record state this change carries.
    public var state: RecordState { RecordState(fields: fields, clocks: clocks, isDeleted: deleted) }
}

/// The reply to a pull.
public struct PullResponse: Sendable, Hashable {
    /// Changes in ascending `seq` order within each space.
    public var changes: [Change]
    /// The cursor to send next time, per space the user can read.
    public var cursors: [UUID: Int64]
    /// Whether more changes wait: pull again with the new cursors.
    public var hasMore: Bool
    /// Spaces whose cursor fell behind tombstone garbage collection: drop their local rows
    /// (keeping the outbox) and pull them again from 0.
    public var resetRequired: [UUID]
    /// The current key version of every end-to-end encrypted space the user belongs to, excluded ones included
    /// (0 while the space has no key yet): a device that lacks a version asks for it (`GET /sync/v1/secrets`).
    public var keyVersions: [UUID: Int]
    /// How ``writeJSON(into:)`` spells the changes' clocks: the form the pull asked for. Not a member of the reply;
    /// the reader reads both.
    public var clockForm: ClockForm = .field

    /// Creates a reply.
    public init(changes: [Change], cursors: [UUID: Int64], hasMore: Bool, resetRequired: [UUID] = [], keyVersions: [UUID: Int] = [:]) {
        self.changes = changes
        self.cursors = cursors
        self.hasMore = hasMore
        self.resetRequired = resetRequired
        self.keyVersions = keyVersions
    }
}
