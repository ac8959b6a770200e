import FerryCore
import Foundation

/// How a record of an end-to-end encrypted space is stored: its encrypted values in the `_sealed` column as one JSON
/// object, its typed columns `NULL` except the parent link and blob references, which stay in clear so cascades, parent
/// checks and blob checks work.
extension StoredRecord {
    /// The values for the typed columns, and the `_sealed` column's JSON text (`nil` outside an encrypted space).
    func storageValues(in collection: CollectionDefinition, isSealed: Bool) -> (typed: [String: JSONValue], sealed: String?) {
        guard isSealed else { return (state.fields, nil) }
        let typed = state.fields.filter { !collection.isSealed(fieldNamed: $0.key) }
        let sealed = state.fields.filter { collection.isSealed(fieldNamed: $0.key) && !$0.value.isNull }
        return (typed, JSONValue.object(sealed).jsonText)
    }
}

extension RecordState {
    /// Puts the values of a `_sealed` column back among the fields, so merges, cascades and pulls see them unchanged.
    mutating func unseal(_ sealed: JSONValue?, in collection: CollectionDefinition) {
        guard case .object(let values)? = sealed else { return }
        for (name, value) in values where collection.field(named: name) != nil {
            fields[name] = value
        }
    }
}
