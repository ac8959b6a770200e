/// One parsed schema file, before it is merged with the others and checked as a whole.
struct SchemaDocument {
    struct Located<Value> {
        var value: Value
        var file: String
        var line: Int?
        var path: String

        func error(_ message: String, path suffix: String? = nil) -> SchemaError {
            SchemaError(file: file, line: line, path: suffix.map { "\(path).\($0)" } ?? path, message: message)
        }
    }

    var file: String
    var collections: [Located<CollectionDefinition>]
    var profileFields: Located<[FieldDefinition]>?
    var requiredProfileFields: Located<[String]>?
    var buckets: [Located<BucketDefinition>] = []

    /// Merges documents into one schema and checks what only the whole can tell:
    /// duplicates across files, parents that exist, no cycles.
    static func merge(_ documents: [SchemaDocument]) throws(SchemaError) -> Schema {
        var byName: [String: Located<CollectionDefinition>] = [:]
        var order: [String] = []
        var profileFields: Located<[FieldDefinition]>?
        var requiredProfileFields: Located<[String]>?
        var buckets: [String: Located<BucketDefinition>] = [:]

        for document in documents {
            for bucket in document.buckets {
                if let earlier = buckets[bucket.value.name] {
                    throw bucket.error("bucket '\(bucket.value.name)' is already declared in \(earlier.file)")
                }
                buckets[bucket.value.name] = bucket
            }
            for collection in document.collections {
                let name = collection.value.name
                if let earlier = byName[name] {
                    throw collection.error("collection '\(name)' is already declared in \(earlier.file)")
                }
                byName[name] = collection
                order.append(name)
            }
            if let fields = document.profileFields {
                if let earlier = profileFields {
                    throw fields.error("the profile is already declared in \(earlier.file)")
                }
                profileFields = fields
                requiredProfileFields = document.requiredProfileFields
            }
        }

        for name in order {
            guard let collection = byName[name], let parent = collection.value.parent else { continue }
            guard byName[parent.collection] != nil else {
                throw collection.error("unknown parent collection '\(parent.collection)'", path: "parent.collection")
            }
            var seen: Set<String> = [name]
            var next = byName[parent.collection]?.value.parent?.collection
            seen.insert(parent.collection)
            while let current = next {
                if seen.contains(current) {
                    throw collection.error("parents form a cycle through '\(current)'", path: "parent")
                }
                seen.insert(current)
                next = byName[current]?.value.parent?.collection
            }
        }

        let profile = CollectionDefinition(name: "profiles", fields: profileFields?.value ?? [], isSystem: true)
        let required = requiredProfileFields?.value ?? []
        if let location = requiredProfileFields {
            for field in required where profile.field(named: field) == nil {
                throw location.error("'\(field)' is not a profile field")
            }
        }
        let ordered = parentsFirst(order.compactMap { byName[$0]?.value })
        return Schema(
            collections: [profile] + ordered, requiredProfileFields: required,
            buckets: buckets.values.map(\.value).sorted { $0.name < $1.name }
        )
    }

    /// Orders collections so each parent comes before its children, otherwise keeping file order.
    private static func parentsFirst(_ collections: [CollectionDefinition]) -> [CollectionDefinition] {
        var placed: Set<String> = []
        var result: [CollectionDefinition] = []
        var remaining = collections
        while !remaining.isEmpty {
            let ready = remaining.filter { $0.parent.map { placed.contains($0.collection) } ?? true }
            for collection in ready { placed.insert(collection.name) }
            result += ready
            remaining.removeAll { placed.contains($0.name) }
        }
        return result
    }
}
