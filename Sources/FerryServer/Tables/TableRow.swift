import FerryCore
import Foundation

/// One row of a table reply: its columns in the order the `select` named them, embedded resources nested.
struct TableRow: Sendable, JSONTextWritable {
    var columns: [(name: String, value: TableValue)] = []

    func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, column) in columns.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.write(column.name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            column.value.writeJSON(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

/// A column's value: a field's, or an embedded parent (one row or `null`) or children (an array).
enum TableValue: Sendable, JSONTextWritable {
    case value(JSONValue)
    case parent(TableRow?)
    case children([TableRow])

    func writeJSON(into bytes: inout [UInt8]) {
        switch self {
        case .value(let value): value.write(into: &bytes)
        case .parent(let row?): row.writeJSON(into: &bytes)
        case .parent(nil): JSONValue.null.write(into: &bytes)
        case .children(let rows): TableRows(rows: rows).writeJSON(into: &bytes)
        }
    }
}

/// Rows as a JSON array.
struct TableRows: Sendable, JSONTextWritable {
    var rows: [TableRow]

    func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, row) in rows.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            row.writeJSON(into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}

/// A `select` list checked against the schema: each output column and where its value comes from.
struct SelectPlan: Sendable {
    enum Source: Sendable {
        case column(String)
        /// The records of `collection` whose `field` names this one; `isOne` when `field` alone is a unique key of
        /// `collection`, so at most one can (PostgREST embeds such a one-to-one child as an object or `null`).
        case children(CollectionDefinition, field: String, isOne: Bool, plan: SelectPlan, path: String)
        /// The record of `collection` this one's `field` names.
        case parent(CollectionDefinition, field: String, plan: SelectPlan, path: String)
    }

    var collection: CollectionDefinition
    var outputs: [(name: String, source: Source)] = []

    /// Resolves `items` on `collection`: unknown columns are `42703`, unknown or unrelated resources `PGRST200`.
    init(_ items: [SelectItem], collection: CollectionDefinition, schema: Schema, path: String = "") throws(TableError) {
        self.collection = collection
        for item in items {
            switch item {
            case .all:
                for name in ["id", "_space"] + collection.fields.map(\.name) { outputs.append((name, .column(name))) }
            case .column(let name, let alias):
                guard name == "id" || name == "_space" || collection.field(named: name) != nil else {
                    throw .unknownColumn(name, of: collection.name)
                }
                outputs.append((alias ?? name, .column(name)))
            case .embed(let name, let alias, let items):
                let nested = path.isEmpty ? name : path + "." + name
                guard let other = schema.collection(named: name), !other.isSystem else {
                    throw Self.noRelationship(collection.name, name)
                }
                if let link = other.parent, link.collection == collection.name {
                    let plan = try SelectPlan(items, collection: other, schema: schema, path: nested)
                    let isOne = other.uniqueKeys.contains([link.field])
                    outputs.append((alias ?? name, .children(other, field: link.field, isOne: isOne, plan: plan, path: nested)))
                } else if let link = collection.parent, link.collection == other.name {
                    let plan = try SelectPlan(items, collection: other, schema: schema, path: nested)
                    outputs.append((alias ?? name, .parent(other, field: link.field, plan: plan, path: nested)))
                } else {
                    throw Self.noRelationship(collection.name, name)
                }
            }
        }
    }

    private static func noRelationship(_ table: String, _ other: String) -> TableError {
        TableError(
            .invalidRequest, "PGRST200", "Could not find a relationship between '\(table)' and '\(other.prefix(64))' in the schema cache",
            hint: "Embedding follows the schema's parent links: a collection's children, or its parent."
        )
    }

    /// The value of column `name` of a record.
    static func value(_ name: String, id: UUID, record: StoredRecord) -> JSONValue {
        switch name {
        case "id": .string(id.lowercasedText)
        case "_space": .string(record.space.lowercasedText)
        default: record.state.fields[name] ?? .null
        }
    }
}
