import Foundation

// A mutation's one JSON reader and one writer (docs/sync.md, "Push"). A field added to ``Mutation`` is read and
// written here, beside each other; `WireCodingTests` round-trips every field.

extension Mutation: JSONTextWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        object.key("clocks", &bytes)
        if let storedJSON {
            bytes.append(contentsOf: storedJSON.clocks.utf8)
        } else {
            ClockMap.write(clocks, into: &bytes)
        }
        object.key("collection", &bytes)
        JSONValue.write(collection, into: &bytes)
        object.key("fields", &bytes)
        if let storedJSON {
            bytes.append(contentsOf: storedJSON.fields.utf8)
        } else {
            JSONValue.object(fields).write(into: &bytes)
        }
        object.key("id", &bytes)
        JSONValue.write(id, into: &bytes)
        object.key("mutationId", &bytes)
        bytes.append(contentsOf: String(mutationId).utf8)
        object.key("op", &bytes)
        JSONValue.write(op.rawValue, into: &bytes)
        object.key("space", &bytes)
        JSONValue.write(space, into: &bytes)
        object.end(&bytes)
    }
}

extension Mutation: JSONStreamReadable {
    package init(stream parser: inout JSONTextParser) throws {
        var (mutationID, space, collection, id, op): (Int64?, UUID?, String?, UUID?, Operation?)
        var (fields, clocks): ([String: JSONValue], [String: HLC]) = ([:], [:])
        var clocksText: String?
        try parser.readObject { parser, key in
            switch key {
            case "mutationId": mutationID = try parser.readInt64()
            case "space": space = try parser.readUUID()
            case "collection": collection = try parser.readString()
            case "id": id = try parser.readUUID()
            case "op":
                guard let operation = Operation(rawValue: try parser.readString()) else { throw parser.corrupted("op must be upsert or delete.") }
                op = operation
            case "fields": fields = try parser.readFields()
            case "clocks": (clocks, clocksText) = try parser.readClocksKeepingWrittenText()
            default: try parser.skipValue()
            }
        }
        self.init(
            mutationId: try parser.required(mutationID, "mutationId"), space: try parser.required(space, "space"),
            collection: try parser.required(collection, "collection"), id: try parser.required(id, "id"), op: try parser.required(op, "op"),
            fields: fields, clocks: clocks
        )
        receivedClocksText = clocksText
    }
}
