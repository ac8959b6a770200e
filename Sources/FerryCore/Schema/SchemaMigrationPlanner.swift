/// Compares the schema a database was built for with a new one and lists the additive changes,
/// or refuses when any change is destructive.
///
/// Allowed: new collections, new optional fields, new or dropped unique keys, a required field
/// becoming optional. Refused: a removed collection or field, a changed type, a field becoming
/// required, a new required field, a changed parent or encryption. Devices in the field still hold
/// data in the old shape, so these need a new collection (or field) and a migration in the app.
public enum SchemaMigrationPlanner {
    /// The changes that take `current` (what the database has) to `desired`.
    public static func plan(
        from current: [CollectionDefinition],
        to desired: [CollectionDefinition]
    ) throws(DestructiveSchemaChangeError) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        var problems: [DestructiveSchemaChangeError.Problem] = []
        let desiredNames = Set(desired.map(\.name))

        for old in current where !desiredNames.contains(old.name) {
            problems.append(.init(
                collection: old.name,
                message: "the collection exists in the database but is missing from the schema; removing a collection is destructive, so keep it in the schema"
            ))
        }
        for new in desired {
            guard let old = current.first(where: { $0.name == new.name }) else {
                changes.append(.createCollection(new))
                continue
            }
            let (collectionChanges, collectionProblems) = compare(old, new)
            changes += collectionChanges
            problems += collectionProblems
        }
        guard problems.isEmpty else { throw DestructiveSchemaChangeError(problems: problems) }
        return changes
    }

    private static func compare(
        _ old: CollectionDefinition, _ new: CollectionDefinition
    ) -> ([SchemaChange], [DestructiveSchemaChangeError.Problem]) {
        var changes: [SchemaChange] = []
        var problems: [DestructiveSchemaChangeError.Problem] = []
        func refuse(_ field: String?, _ message: String) {
            problems.append(.init(collection: new.name, field: field, message: message))
        }

        if old.parent != new.parent { refuse(nil, "the parent cannot change") }
        if old.isEncrypted != new.isEncrypted { refuse(nil, "encryption cannot be switched on or off for existing records") }

        for oldField in old.fields {
            guard let newField = new.field(named: oldField.name) else {
                refuse(oldField.name, "the field was removed from the schema; dropping a field is destructive, so keep it (it may become optional)")
                continue
            }
            if newField.type != oldField.type {
                refuse(oldField.name, "the type changed from \(oldField.type.rawValue) to \(newField.type.rawValue); add a new field instead")
            } else if newField.isRequired && !oldField.isRequired {
                refuse(oldField.name, "an optional field cannot become required: existing records may lack it")
            }
        }
        for newField in new.fields where old.field(named: newField.name) == nil {
            if newField.isRequired {
                refuse(newField.name, "a new field of an existing collection must be optional: existing records lack it")
            } else {
                changes.append(.addField(collection: new, field: newField))
            }
        }
        for key in new.uniqueKeys where !old.uniqueKeys.contains(key) {
            changes.append(.addUniqueKey(collection: new, key: key))
        }
        for key in old.uniqueKeys where !new.uniqueKeys.contains(key) {
            changes.append(.dropUniqueKey(collection: new, key: key))
        }
        if changes.isEmpty && problems.isEmpty && old != new {
            changes.append(.updateDefinition(new))
        }
        return (changes, problems)
    }
}
