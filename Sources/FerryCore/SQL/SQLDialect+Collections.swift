extension SQLDialect {
    /// Statements that create a collection's table and its indexes.
    public func createStatements(for collection: CollectionDefinition) -> [String] {
        let columns = reservedColumnDefinitions + collection.fields.map { field in
            "\(quote(field.name)) \(storageType(for: field, in: collection))"
        }
        let table = quote(collection.name)
        var statements = [
            "CREATE TABLE \(table) (\n  " + columns.joined(separator: ",\n  ") + "\n)\(tableOptions)",
            "CREATE INDEX \(quote(indexName(collection.name, "seq"))) ON \(table) (\"_space\", \"_seq\")",
        ]
        if let parent = collection.parent {
            statements.append(
                "CREATE INDEX \(quote(indexName(collection.name, "parent"))) ON \(table) (\(quote(parent.field)))"
            )
        }
        statements += collection.uniqueKeys.map { createUniqueIndex(on: collection, key: $0) }
        return statements
    }

    /// The statements that carry out one additive ``SchemaChange``.
    public func statements(for change: SchemaChange) -> [String] {
        switch change {
        case .createCollection(let collection):
            createStatements(for: collection)
        case .addField(let collection, let field):
            ["ALTER TABLE \(quote(collection.name)) ADD COLUMN \(quote(field.name)) \(storageType(for: field, in: collection))"]
        case .addUniqueKey(let collection, let key):
            [createUniqueIndex(on: collection, key: key)]
        case .dropUniqueKey(let collection, let key):
            ["DROP INDEX IF EXISTS \(quote(uniqueIndexName(collection.name, key)))"]
        case .updateDefinition:
            []
        }
    }

    private func createUniqueIndex(on collection: CollectionDefinition, key: [String]) -> String {
        let columns = (["_space"] + key).map(quote).joined(separator: ", ")
        return "CREATE UNIQUE INDEX \(quote(uniqueIndexName(collection.name, key))) ON \(quote(collection.name)) (\(columns)) WHERE \(liveRowCondition)"
    }

    /// Unique keys hold within a space: two companies may both have a client named "Acme".
    func uniqueIndexName(_ collection: String, _ key: [String]) -> String {
        indexName(collection, "uq__" + key.joined(separator: "__"))
    }

    /// `collection__suffix`, or a hashed form when that would pass PostgreSQL's 63-byte limit
    /// (PostgreSQL truncates longer names silently, which could make two indexes collide).
    func indexName(_ collection: String, _ suffix: String) -> String {
        let name = "\(collection)__\(suffix)"
        guard name.utf8.count > Identifier.maximumLength else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digest = String(hash, radix: 16)
        return String(collection.prefix(Identifier.maximumLength - digest.count - 2)) + "__" + digest
    }
}
