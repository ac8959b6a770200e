import FerryCore
import Foundation

/// The rows of a table reply, each already its JSON object (embedded resources inside), in one buffer with a comma
/// between rows: rendering writes every value once, where it goes, and the whole page is a JSON array by adding its
/// brackets, so a reply copies it once.
struct TableRows: Sendable, JSONTextWritable {
    /// The rows' objects, comma-separated.
    private(set) var text: [UInt8] = []
    /// Where each row's object starts and ends in `text`.
    private var starts: [Int] = []
    private var ends: [Int] = []

    var count: Int { ends.count }
    var isEmpty: Bool { ends.isEmpty }

    /// Row `index`'s JSON object.
    func row(_ index: Int) -> ArraySlice<UInt8> {
        text[starts[index]..<ends[index]]
    }

    /// Makes room for about `byteCount` bytes of rows: a page of a thousand rows otherwise grows by doubling.
    mutating func reserve(_ byteCount: Int) {
        text.reserveCapacity(byteCount)
    }

    /// Adds one row, written by `write` (a whole JSON object).
    mutating func append(_ write: (inout [UInt8]) -> Void) {
        if !ends.isEmpty { text.append(UInt8(ascii: ",")) }
        starts.append(text.count)
        write(&text)
        ends.append(text.count)
    }

    /// The rows `indices` name (in that order), as a JSON array.
    func writeArray(_ indices: some Sequence<Int>, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for index in indices {
            if !first { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: row(index))
            first = false
        }
        bytes.append(UInt8(ascii: "]"))
    }

    func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        bytes.append(contentsOf: text)
        bytes.append(UInt8(ascii: "]"))
    }

    var approximateJSONByteCount: Int { text.count + 2 }
}

/// A `select` list checked against the schema: each output column and where its value comes from.
struct SelectPlan: Sendable {
    enum Source: Sendable {
        /// The record's id.
        case id
        /// The record's space.
        case space
        /// The field at this index of the collection's fields.
        case field(Int)
        /// The records of `collection` whose field at `link` names this one; `isOne` when that field alone is a unique
        /// key of `collection`, so at most one can (PostgREST embeds such a one-to-one child as an object or `null`).
        case children(CollectionDefinition, link: Int, isOne: Bool, plan: SelectPlan, path: String)
        /// The record of `collection` this one's field at `link` names.
        case parent(CollectionDefinition, link: Int, plan: SelectPlan, path: String)
    }

    var collection: CollectionDefinition
    var outputs: [(name: String, source: Source)] = []
    /// The output columns' keys as JSON (`"title":`), written once per plan rather than escaped again for every row.
    var keys: [[UInt8]] = []

    /// Resolves `items` on `collection`: unknown columns are `42703`, unknown or unrelated resources `PGRST200`.
    init(_ items: [SelectItem], collection: CollectionDefinition, schema: Schema, path: String = "") throws(TableError) {
        self.collection = collection
        for item in items {
            switch item {
            case .all:
                outputs += [("id", .id), ("_space", .space)]
                for (index, field) in collection.fields.enumerated() { outputs.append((field.name, .field(index))) }
            case .column(let name, let alias):
                let source: Source
                switch name {
                case "id": source = .id
                case "_space": source = .space
                default:
                    guard let index = collection.fields.firstIndex(where: { $0.name == name }) else { throw .unknownColumn(name, of: collection.name) }
                    source = .field(index)
                }
                outputs.append((alias ?? name, source))
            case .embed(let name, let alias, let items):
                let nested = path.isEmpty ? name : path + "." + name
                guard let other = schema.collection(named: name), !other.isSystem else {
                    throw Self.noRelationship(collection.name, name)
                }
                if let link = other.parent, link.collection == collection.name, let index = other.fields.firstIndex(where: { $0.name == link.field }) {
                    let plan = try SelectPlan(items, collection: other, schema: schema, path: nested)
                    let isOne = other.uniqueKeys.contains([link.field])
                    outputs.append((alias ?? name, .children(other, link: index, isOne: isOne, plan: plan, path: nested)))
                } else if let link = collection.parent, link.collection == other.name,
                          let index = collection.fields.firstIndex(where: { $0.name == link.field }) {
                    let plan = try SelectPlan(items, collection: other, schema: schema, path: nested)
                    outputs.append((alias ?? name, .parent(other, link: index, plan: plan, path: nested)))
                } else {
                    throw Self.noRelationship(collection.name, name)
                }
            }
        }
        keys = outputs.map { output in
            var key: [UInt8] = []
            JSONValue.write(output.name, into: &key)
            key.append(UInt8(ascii: ":"))
            return key
        }
    }

    /// The paths of the embedded resources, nested ones included (`notes`, `notes.items`).
    var embeddedPaths: Set<String> {
        var paths = Set<String>()
        for output in outputs {
            switch output.source {
            case .children(_, _, _, let plan, let path), .parent(_, _, let plan, let path):
                paths.insert(path)
                paths.formUnion(plan.embeddedPaths)
            default: break
            }
        }
        return paths
    }

    /// Refuses options (`notes.order`, `notes.text=eq.…`) for a resource the select does not embed, as PostgREST does
    /// (`PGRST108`): left unapplied, they would answer rows the client meant to filter out.
    func requireEmbedded(_ query: TableQuery) throws(TableError) {
        guard let stray = Set(query.embedded.keys).subtracting(embeddedPaths).sorted().first else { return }
        throw TableError(
            .invalidRequest, "PGRST108", "'\(stray.prefix(64))' is not an embedded resource in this request",
            hint: "Add \(stray.prefix(64))(...) to select, or drop its filters and order."
        )
    }

    private static func noRelationship(_ table: String, _ other: String) -> TableError {
        TableError(
            .invalidRequest, "PGRST200", "Could not find a relationship between '\(table)' and '\(other.prefix(64))' in the schema cache",
            hint: "Embedding follows the schema's parent links: a collection's children, or its parent."
        )
    }
}
