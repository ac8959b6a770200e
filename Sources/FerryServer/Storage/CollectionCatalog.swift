import FerryCore
import Foundation

/// Encodes collection definitions for the `ferry_collections` catalog, the same way on every engine.
enum CollectionCatalog {
    static func encode(_ collection: CollectionDefinition) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(collection), as: UTF8.self)
    }

    static func decode(_ definition: String) throws -> CollectionDefinition {
        try JSONDecoder().decode(CollectionDefinition.self, from: Data(definition.utf8))
    }

    /// The collections whose catalog rows `changes` update, each once.
    static func changedCollections(_ changes: [SchemaChange]) -> [CollectionDefinition] {
        var seen: Set<String> = []
        return changes.map(\.collection).filter { seen.insert($0.name).inserted }
    }
}
