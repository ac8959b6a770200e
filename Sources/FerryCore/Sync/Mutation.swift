import Foundation

/// One local write sent to the server in a push.
public struct Mutation: Sendable, Hashable {
    /// What a mutation does to its record.
    public enum Operation: String, Sendable, Hashable, Codable {
        /// Writes the given fields (creating the record when it is new).
        case upsert
        /// Tombstones the record and its children; `clocks._deleted` is the delete's clock.
        case delete
    }

    /// Per device, strictly increasing; the server skips any id at or below the last one it applied.
    public var mutationId: Int64
    /// The space the record belongs to.
    public var space: UUID
    /// The collection's name.
    public var collection: String
    /// The record's id, chosen by the device.
    public var id: UUID
    /// Upsert or delete.
    public var op: Operation
    /// The written fields (upsert), in wire form.
    public var fields: [String: JSONValue] {
        get { storedJSON.map { JSONValue(jsonText: $0.fields)?.objectValue ?? [:] } ?? plainFields }
        set {
            materialize()
            plainFields = newValue
        }
        _modify {
            materialize()
            yield &plainFields
        }
    }
    /// One clock per written field; `_deleted` for a delete or an explicit undelete.
    public var clocks: [String: HLC] {
        get { storedJSON.map { ClockMap.clocks(fromText: $0.clocks) ?? [:] } ?? plainClocks }
        set {
            materialize()
            plainClocks = newValue
            receivedClocksText = nil
        }
        _modify {
            materialize()
            receivedClocksText = nil
            yield &plainClocks
        }
    }

    private var plainFields: [String: JSONValue]
    private var plainClocks: [String: HLC]
    /// `fields` and `clocks` as the JSON a store keeps them in, when the mutation was read from one and not changed
    /// since. A push writes this text as it is: parsing it into values and encoding them again was a fifth of a
    /// push's client CPU, and a push needs the values only to seal a record of an encrypted space. `fields` and
    /// `clocks` parse it each time they are read; the first change parses it for good.
    package private(set) var storedJSON: StoredJSON?
    /// `clocks` as the text a request carried them in, when that text is the one ``ClockMap/text(_:)`` writes for them
    /// (keys in order, no space, no escape): a server digests it as it came (its mutation fingerprints), without
    /// writing the clocks again. Dropped when `clocks` changes.
    package internal(set) var receivedClocksText: String?

    /// The JSON texts of a mutation's `fields` (an object) and `clocks` (a ``ClockMap`` text).
    package struct StoredJSON: Sendable {
        package var fields: String
        package var clocks: String

        package init(fields: String, clocks: String) {
            self.fields = fields
            self.clocks = clocks
        }
    }

    /// Creates a mutation.
    public init(
        mutationId: Int64, space: UUID, collection: String, id: UUID, op: Operation,
        fields: [String: JSONValue] = [:], clocks: [String: HLC]
    ) {
        self.mutationId = mutationId
        self.space = space
        self.collection = collection
        self.id = id
        self.op = op
        self.plainFields = fields
        self.plainClocks = clocks
    }

    /// A mutation whose fields and clocks are the texts a store keeps them in, read only when asked for.
    package init(mutationId: Int64, space: UUID, collection: String, id: UUID, op: Operation, storedJSON: StoredJSON) {
        self.init(mutationId: mutationId, space: space, collection: collection, id: id, op: op, clocks: [:])
        self.storedJSON = storedJSON
    }

    /// This mutation with its stored texts parsed into values (itself when it holds values), or `nil` when they do not
    /// parse: a damaged store, where `fields` and `clocks` read as empty.
    package func parsed() -> Mutation? {
        guard let storedJSON else { return self }
        guard let fields = JSONValue(jsonText: storedJSON.fields)?.objectValue, let clocks = ClockMap.clocks(fromText: storedJSON.clocks) else {
            return nil
        }
        return Mutation(mutationId: mutationId, space: space, collection: collection, id: id, op: op, fields: fields, clocks: clocks)
    }

    /// Parses the stored texts into values, which from now on are the mutation's.
    private mutating func materialize() {
        guard storedJSON != nil else { return }
        (plainFields, plainClocks) = (fields, clocks)
        storedJSON = nil
    }

    public static func == (lhs: Mutation, rhs: Mutation) -> Bool {
        lhs.mutationId == rhs.mutationId && lhs.space == rhs.space && lhs.collection == rhs.collection && lhs.id == rhs.id
            && lhs.op == rhs.op && lhs.fields == rhs.fields && lhs.clocks == rhs.clocks
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(mutationId)
        hasher.combine(space)
        hasher.combine(collection)
        hasher.combine(id)
        hasher.combine(op)
        hasher.combine(fields)
        hasher.combine(clocks)
    }

    /// The state this mutation asks the record to merge: the written fields, or a tombstone for a delete.
    /// An upsert that carries a `_deleted` clock is an explicit undelete.
    public var state: RecordState {
        let clocks = self.clocks
        let deletedClock = clocks[RecordState.deletedKey]
        switch op {
        case .delete:
            return RecordState(clocks: deletedClock.map { [RecordState.deletedKey: $0] } ?? [:], isDeleted: true)
        case .upsert:
            return RecordState(fields: fields, clocks: clocks, isDeleted: false)
        }
    }
}
