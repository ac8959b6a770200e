import FerryCore
import Foundation

/// One row of a table reply: its values in the order its ``SelectPlan`` names the columns, embedded resources nested.
struct TableRow: Sendable {
    var values: [TableValue] = []
}

/// A column's value: a field's, or an embedded parent (one row or `null`) or children (an array).
enum TableValue: Sendable {
    case value(JSONValue)
    case parent(TableRow?)
    case children([TableRow])
}

/// Rows as their JSON array, each object's keys written once per plan (`"title":`) rather than escaped again for
/// every row.
struct TableRows: Sendable, JSONTextWritable {
    var rows: [TableRow]
    var plan: SelectPlan

    func writeJSON(into bytes: inout [UInt8]) {
        Self.write(rows, keys: plan.keys, into: &bytes)
    }

    /// One row as a JSON object.
    static func write(_ row: TableRow, keys: SelectPlan.Keys, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, value) in row.values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: keys.names[index])
            switch value {
            case .value(let value): value.write(into: &bytes)
            case .parent(let parent?): write(parent, keys: keys.nested[index]!, into: &bytes)
            case .parent(nil): JSONValue.null.write(into: &bytes)
            case .children(let children): write(children, keys: keys.nested[index]!, into: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static func write(_ rows: [TableRow], keys: SelectPlan.Keys, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, row) in rows.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            write(row, keys: keys, into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
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

    /// The output columns' keys as JSON (`"title":`), and the nested plans' keys by column.
    struct Keys: Sendable {
        var names: [[UInt8]] = []
        var nested: [Int: Keys] = [:]
    }

    var collection: CollectionDefinition
    var outputs: [(name: String, source: Source)] = []
    var keys = Keys()

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
        for (index, output) in outputs.enumerated() {
            var key: [UInt8] = []
            JSONValue.write(output.name, into: &key)
            key.append(UInt8(ascii: ":"))
            keys.names.append(key)
            switch output.source {
            case .children(_, _, _, let plan, _), .parent(_, _, let plan, _): keys.nested[index] = plan.keys
            default: break
            }
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

extension TableRecord {
    /// The id a link field holds, in the lowercase text ids are compared in.
    func link(_ index: Int) -> String? {
        values[index].stringValue
    }
}
