import Yams

/// Walks a composed YAML tree, keeping the dotted path and line of every node for errors.
struct NodeReader {
    let file: String

    private func error(_ node: Node?, _ path: String, _ message: String) -> SchemaError {
        SchemaError(file: file, line: node?.mark?.line, path: path, message: message)
    }

    private func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The pairs of a mapping, checking that every key is a string from `allowed`
    /// (Yams has already refused duplicate keys).
    private func mapping(_ node: Node, _ path: String, allowed: Set<String>? = nil) throws(SchemaError) -> [(String, Node)] {
        guard let mapping = node.mapping else {
            throw error(node, path, "expected a mapping of keys to values")
        }
        var pairs: [(String, Node)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                throw error(key, path, "keys must be plain strings")
            }
            if let allowed, !allowed.contains(name) {
                let expected = allowed.sorted().joined(separator: ", ")
                throw error(key, join(path, name), "unknown key '\(name)' (expected one of: \(expected))")
            }
            pairs.append((name, value))
        }
        return pairs
    }

    private func string(_ node: Node, _ path: String) throws(SchemaError) -> String {
        guard let scalar = node.scalar else { throw error(node, path, "expected a string") }
        return scalar.string
    }

    private func bool(_ node: Node, _ path: String) throws(SchemaError) -> Bool {
        guard node.scalar != nil, let value = node.bool else {
            throw error(node, path, "expected true or false")
        }
        return value
    }

    private func strings(_ node: Node, _ path: String) throws(SchemaError) -> [String] {
        guard let sequence = node.sequence else { throw error(node, path, "expected a list of names") }
        guard sequence.count <= Self.maximumFields else { throw error(node, path, "a list has at most \(Self.maximumFields) names") }
        var result: [String] = []
        for (index, item) in sequence.enumerated() {
            result.append(try string(item, "\(path)[\(index)]"))
        }
        return result
    }

    private func name(_ name: String, _ node: Node, _ path: String) throws(SchemaError) -> String {
        if let problem = Identifier.problem(with: name) {
            throw error(node, path, problem)
        }
        return name
    }

    mutating func readDocument(_ root: Node) throws(SchemaError) -> SchemaDocument {
        var document = SchemaDocument(file: file, collections: [], profileFields: nil, requiredProfileFields: nil)
        for (key, value) in try mapping(root, "", allowed: ["version", "collections", "profile", "buckets"]) {
            switch key {
            case "version":
                guard value.int == 1 else { throw error(value, "version", "only schema version 1 exists") }
            case "collections":
                if let count = value.mapping?.count, count > Self.maximumCollections {
                    throw error(value, "collections", "a schema has at most \(Self.maximumCollections) collections")
                }
                for (name, body) in try mapping(value, "collections") {
                    document.collections.append(try readCollection(name, body, "collections.\(name)"))
                }
            case "buckets":
                if let count = value.mapping?.count, count > Self.maximumBuckets {
                    throw error(value, "buckets", "a schema has at most \(Self.maximumBuckets) buckets")
                }
                for (name, body) in try mapping(value, "buckets") {
                    document.buckets.append(.init(value: try readBucket(name, body, "buckets.\(name)"), file: file, line: body.mark?.line, path: "buckets.\(name)"))
                }
            default:
                try readProfile(value, "profile", into: &document)
            }
        }
        return document
    }

    /// `name: {public: false, file_size_limit: 104857600, allowed_mime_types: [audio/*]}` (an empty body is a private bucket).
    private func readBucket(_ name: String, _ node: Node, _ path: String) throws(SchemaError) -> BucketDefinition {
        if let problem = BucketDefinition.problem(with: name) { throw error(node, path, problem) }
        var bucket = BucketDefinition(name: name)
        if node.scalar?.string == "" || node.scalar?.string == "~" || node.null != nil { return bucket }
        for (key, value) in try mapping(node, path, allowed: ["public", "file_size_limit", "allowed_mime_types"]) {
            switch key {
            case "public":
                bucket.isPublic = try bool(value, join(path, key))
            case "file_size_limit":
                guard let limit = value.int, limit > 0 else { throw error(value, join(path, key), "expected a positive number of bytes") }
                bucket.fileSizeLimit = Int64(limit)
            default:
                bucket.allowedMimeTypes = try strings(value, join(path, key))
            }
        }
        return bucket
    }

    private func readCollection(
        _ rawName: String, _ node: Node, _ path: String
    ) throws(SchemaError) -> SchemaDocument.Located<CollectionDefinition> {
        let collectionName = try name(rawName, node, path)
        if Schema.systemCollectionNames.contains(collectionName) {
            throw error(node, path, "'\(collectionName)' is a system collection; declare profile fields under 'profile'")
        }
        if collectionName.hasPrefix("ferry_") {
            throw error(node, path, "names starting with 'ferry_' are reserved for the server's own tables")
        }
        var collection = CollectionDefinition(name: collectionName, fields: [])
        var uniqueNodes: (Node, [[String]])?
        var sawFields = false
        for (key, value) in try mapping(node, path, allowed: ["fields", "parent", "unique", "encrypted"]) {
            let keyPath = join(path, key)
            switch key {
            case "fields":
                sawFields = true
                collection.fields = try readFields(value, keyPath)
            case "parent":
                collection.parent = try readParent(value, keyPath)
            case "unique":
                uniqueNodes = (value, try readUnique(value, keyPath))
            default:
                collection.isEncrypted = try bool(value, keyPath)
            }
        }
        guard sawFields else { throw error(node, path, "a collection needs a 'fields' mapping") }

        if let parent = collection.parent {
            if let index = collection.fields.firstIndex(where: { $0.name == parent.field }) {
                guard collection.fields[index].type == .uuid else {
                    throw error(node, "\(path).fields.\(parent.field)", "the parent field must have type uuid")
                }
                collection.fields[index].isRequired = true
            } else {
                collection.fields.insert(FieldDefinition(name: parent.field, type: .uuid, isRequired: true), at: 0)
            }
        }
        if let (uniqueNode, keys) = uniqueNodes {
            if collection.isEncrypted {
                throw error(uniqueNode, "\(path).unique", "an encrypted collection cannot have unique keys: the server sees only ciphertext")
            }
            for key in keys {
                for field in key where collection.field(named: field) == nil {
                    throw error(uniqueNode, "\(path).unique", "'\(field)' is not a field of '\(collectionName)'")
                }
            }
            collection.uniqueKeys = keys
        }
        return .init(value: collection, file: file, line: node.mark?.line, path: path)
    }

    private func readFields(_ node: Node, _ path: String) throws(SchemaError) -> [FieldDefinition] {
        if let count = node.mapping?.count, count > Self.maximumFields {
            throw error(node, path, "a collection has at most \(Self.maximumFields) fields")
        }
        var fields: [FieldDefinition] = []
        for (rawName, value) in try mapping(node, path) {
            let fieldPath = join(path, rawName)
            let fieldName = try name(rawName, value, fieldPath)
            if Identifier.reservedColumns.contains(fieldName) {
                throw error(value, fieldPath, "'\(fieldName)' is reserved (every record has id, _space, _seq, _clocks, _deleted, _updated_at)")
            }
            fields.append(try readField(fieldName, value, fieldPath))
        }
        return fields
    }

    private func readField(_ fieldName: String, _ node: Node, _ path: String) throws(SchemaError) -> FieldDefinition {
        if node.scalar != nil {
            return FieldDefinition(name: fieldName, type: try fieldType(node, path))
        }
        var type: FieldType?
        var isRequired = false
        for (key, value) in try mapping(node, path, allowed: ["type", "required"]) {
            if key == "type" {
                type = try fieldType(value, join(path, key))
            } else {
                isRequired = try bool(value, join(path, key))
            }
        }
        guard let type else { throw error(node, path, "a field needs a 'type'") }
        return FieldDefinition(name: fieldName, type: type, isRequired: isRequired)
    }

    private func fieldType(_ node: Node, _ path: String) throws(SchemaError) -> FieldType {
        let raw = try string(node, path)
        guard let type = FieldType(rawValue: raw) else {
            let expected = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
            throw error(node, path, "unknown type '\(raw)' (expected one of: \(expected))")
        }
        return type
    }

    private func readParent(_ node: Node, _ path: String) throws(SchemaError) -> CollectionDefinition.ParentLink {
        var collection: String?
        var field: String?
        for (key, value) in try mapping(node, path, allowed: ["collection", "field"]) {
            let keyPath = join(path, key)
            let text = try name(try string(value, keyPath), value, keyPath)
            if key == "collection" { collection = text } else { field = text }
        }
        guard let collection, let field else {
            throw error(node, path, "a parent needs both 'collection' and 'field'")
        }
        if Identifier.reservedColumns.contains(field) {
            throw error(node, join(path, "field"), "'\(field)' is reserved (every record has id, _space, _seq, _clocks, _deleted, _updated_at); name the link after its parent, like sermon_id")
        }
        return .init(collection: collection, field: field)
    }

    /// `unique: [email]` is one single-field key; `unique: [[title, date], [slug]]` is a list of keys. The counts are
    /// checked before the lists are read: YAML aliases can repeat one long list any number of times in a short file.
    private func readUnique(_ node: Node, _ path: String) throws(SchemaError) -> [[String]] {
        guard let sequence = node.sequence else { throw error(node, path, "expected a list of keys") }
        guard sequence.count <= Self.maximumUniqueKeys else {
            throw error(node, path, "a collection has at most \(Self.maximumUniqueKeys) unique keys")
        }
        var keys: [[String]] = []
        for (index, item) in sequence.enumerated() {
            let itemPath = "\(path)[\(index)]"
            if let fields = item.sequence, fields.count > Self.maximumUniqueKeyFields {
                throw error(item, itemPath, "a unique key has at most \(Self.maximumUniqueKeyFields) fields")
            }
            let key = item.sequence != nil ? try strings(item, itemPath) : [try string(item, itemPath)]
            guard !key.isEmpty else { throw error(item, itemPath, "a unique key needs at least one field") }
            if let repeated = key.first(where: { field in key.filter { $0 == field }.count > 1 }) {
                throw error(item, itemPath, "the key names '\(repeated)' twice")
            }
            guard !keys.contains(where: { Set($0) == Set(key) }) else { throw error(item, itemPath, "the same key twice") }
            keys.append(key)
        }
        return keys
    }

    /// The bounds of a collection: PostgreSQL's 1,600 columns a table and 32 an index, with room for the sync columns.
    static let maximumFields = 1000
    static let maximumCollections = 200
    static let maximumBuckets = 100
    static let maximumUniqueKeys = 32
    static let maximumUniqueKeyFields = 16

    private func readProfile(_ node: Node, _ path: String, into document: inout SchemaDocument) throws(SchemaError) {
        var fields: [FieldDefinition] = []
        var required: [String] = []
        var requiredNode: Node?
        for (key, value) in try mapping(node, path, allowed: ["fields", "required"]) {
            if key == "fields" {
                fields = try readFields(value, join(path, key))
            } else {
                required = try strings(value, join(path, key))
                requiredNode = value
            }
        }
        document.profileFields = .init(value: fields, file: file, line: node.mark?.line, path: path)
        if let requiredNode {
            document.requiredProfileFields = .init(
                value: required, file: file, line: requiredNode.mark?.line, path: "\(path).required"
            )
        }
    }
}
