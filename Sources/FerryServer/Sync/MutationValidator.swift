import FerryCore
import Foundation

/// Checks each mutation of a push against the schema, the caller's roles and the limits, before any database work.
struct MutationValidator: Sendable {
    let schema: Schema
    let limits: SyncLimits
    let userID: UUID
    /// The caller's role in each space they belong to.
    let roles: [UUID: SpaceRole]
    /// The server's wall clock for this push.
    let now: Date
    /// The current key version of each end-to-end encrypted space the caller belongs to.
    var keyVersions: [UUID: Int] = [:]

    func validate(_ mutation: Mutation) -> Result<ValidatedMutation, Rejection> {
        Result { try check(mutation) }.mapError { $0 as? Rejection ?? Rejection(.invalidRecord, "\($0)") }
    }

    private func check(_ mutation: Mutation) throws -> ValidatedMutation {
        // First, and without encoding it: a huge record costs a walk of the limit's size, not of the record.
        if JSONValue.object(mutation.fields).certainlyExceedsJSONSize(limits.maximumRecordBytes) {
            throw Rejection(.recordTooLarge, "The record is over \(limits.maximumRecordBytes) bytes, the most the server accepts.")
        }
        guard let collection = schema.collection(named: mutation.collection) else {
            throw Rejection(.unknownCollection, "The schema has no collection '\(mutation.collection.prefix(64))'.")
        }
        guard let role = roles[mutation.space] else {
            throw Rejection(.forbiddenSpace, "You are not a member of space \(mutation.space.lowercasedText).")
        }
        guard role.canWrite else {
            throw Rejection(.forbiddenSpace, "Your role in space \(mutation.space.lowercasedText) is \(role.rawValue), which cannot write.")
        }
        if collection.name == "profiles" {
            guard mutation.id == userID, mutation.space == userID else {
                throw Rejection(.invalidRecord, "A profile's id and space must be your user id.")
            }
        } else if collection.isSystem {
            throw Rejection(.invalidRecord, "The system collection '\(collection.name)' is written through its own endpoints.")
        }
        let keyVersion = keyVersions[mutation.space]
        if collection.isEncrypted, keyVersion == nil {
            throw Rejection(
                .spaceNotEncrypted,
                "Collection '\(collection.name)' is end-to-end encrypted: its records belong in an encrypted space, and space \(mutation.space.lowercasedText) is not one."
            )
        }
        var state = mutation.state
        for name in state.fields.keys where collection.field(named: name) == nil {
            throw Rejection(.unknownField, "Collection '\(collection.name)' has no field '\(name.prefix(64))'.")
        }
        for name in state.clocks.keys where name != RecordState.deletedKey && collection.field(named: name) == nil {
            throw Rejection(.unknownField, "Collection '\(collection.name)' has no field '\(name.prefix(64))' (named by a clock).")
        }
        if mutation.op == .delete, state.clocks[RecordState.deletedKey] == nil {
            throw Rejection(.invalidClock, "A delete needs a clock named _deleted.")
        }
        if keyVersion == 0, state.fields.keys.contains(where: { collection.isSealed(fieldNamed: $0) }) {
            throw Rejection(
                .spaceKeyMissing,
                "Space \(mutation.space.lowercasedText) is end-to-end encrypted and has no key yet; a trusted device stores version 1 with PUT /sync/v1/secrets first."
            )
        }
        // Values that normalize to something else (a timestamp's spelling, a sealed value's form) are written back
        // after the walk: the fields are the request's dictionary, and writing each value back copied it whole.
        var normalizedValues: [(name: String, value: JSONValue)] = []
        for (name, value) in state.fields {
            guard state.clocks[name] != nil else {
                throw Rejection(.invalidClock, "Field '\(name)' has no clock; every written field needs one.")
            }
            guard let field = collection.field(named: name) else { continue }
            let normalized: JSONValue
            if let keyVersion, collection.isSealed(field) {
                normalized = try SealedFieldValue.normalized(value, field: name, keyVersion: keyVersion)
            } else {
                var typed = field
                typed.type = collection.storedType(of: field)
                do {
                    normalized = try FieldValue.normalized(value, for: typed)
                } catch {
                    throw Rejection(.typeMismatch, "\(collection.name).\(error.description)")
                }
            }
            if normalized != value { normalizedValues.append((name, normalized)) }
        }
        for (name, value) in normalizedValues { state.fields[name] = value }
        let record = JSONValue.object(state.fields)
        if !record.certainlyFitsJSONSize(limits.maximumRecordBytes) {
            let size = record.jsonByteCount
            guard size <= limits.maximumRecordBytes else {
                throw Rejection(.recordTooLarge, "The record is \(size) bytes; the server accepts up to \(limits.maximumRecordBytes).")
            }
        }
        if keyVersion == nil {
            try checkUniqueKeyLengths(state, collection)
        }
        let capped = capClocks(&state)
        // Every field has a clock (checked above) and no field is named `_deleted` (a reserved column): equal counts
        // mean the clocks are exactly the fields', so the plan can take the state whole for a new record.
        let isWhole = state.clocks.count == state.fields.count + (state.clocks[RecordState.deletedKey] == nil ? 0 : 1)
        return ValidatedMutation(
            mutation: mutation, collection: collection, state: state, cappedClocks: capped, isWhole: isWhole
        )
    }

    /// A unique key's values must fit a database index entry on both engines (PostgreSQL's btree holds about 2.7 KB):
    /// longer ones are refused here, per mutation, rather than failing the push's transaction.
    private func checkUniqueKeyLengths(_ state: RecordState, _ collection: CollectionDefinition) throws {
        for key in collection.uniqueKeys where key.contains(where: { state.fields[$0] != nil }) {
            let size = key.reduce(0) { $0 + (state.fields[$1].map(\.jsonByteCount) ?? 0) }
            guard size <= limits.maximumUniqueKeyBytes else {
                throw Rejection(
                    .uniqueValueTooLong,
                    "The unique key (\(key.joined(separator: ", "))) of \(collection.name) is \(size) bytes; it may be at most \(limits.maximumUniqueKeyBytes)."
                )
            }
        }
    }

    /// Lowers clocks more than the allowed skew ahead of the server to that bound.
    private func capClocks(_ state: inout RecordState) -> [String: HLC] {
        let bound = now.addingTimeInterval(limits.maximumClockSkew.timeInterval)
        let boundMilliseconds = Int64((bound.timeIntervalSince1970 * 1000).rounded(.down))
        var capped: [String: HLC] = [:]
        for (name, clock) in state.clocks where clock.milliseconds > boundMilliseconds {
            let lowered = HLC(milliseconds: boundMilliseconds, counter: clock.counter, node: clock.node)
            state.clocks[name] = lowered
            capped[name] = lowered
        }
        return capped
    }
}

extension UUID {
    /// The lowercase spelling Ferry uses on the wire and in messages.
    var lowercased: String { lowercasedText }
}
