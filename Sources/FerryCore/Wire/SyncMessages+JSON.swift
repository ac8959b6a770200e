import Foundation

// The pull and push messages, written and read without `Codable`'s generic machinery (`JSONTextWritable`,
// `JSONTreeReadable`). Their `Codable` conformances stay, for other coders; `WireCodingTests` checks both agree.

extension Change: JSONTextWritable, JSONTreeReadable {
    public func writeJSON(into bytes: inout [UInt8]) {
        writeJSON(into: &bytes, clockForm: .field)
    }

    /// Writes the change with its clocks in `clockForm` (the field form when the row form cannot say them).
    public func writeJSON(into bytes: inout [UInt8], clockForm: ClockForm) {
        var object = JSONObjectWriter(&bytes)
        if clockForm == .row, ClockMap.writeRowForm(clocksText ?? ClockMap.text(clocks), fields: fields, into: &object, &bytes) {
            // `clock`, and `clocks` for the clocks that differ from it.
        } else if let clocksText {
            object.key("clocks", &bytes)
            bytes.append(contentsOf: clocksText.utf8)
        } else {
            object.key("clocks", &bytes)
            ClockMap.write(clocks, into: &bytes)
        }
        object.key("collection", &bytes)
        JSONValue.write(collection, into: &bytes)
        object.key("deleted", &bytes)
        JSONValue.bool(deleted).write(into: &bytes)
        object.key("fields", &bytes)
        JSONValue.object(fields).write(into: &bytes)
        object.key("id", &bytes)
        JSONValue.write(id, into: &bytes)
        object.key("seq", &bytes)
        bytes.append(contentsOf: String(seq).utf8)
        object.key("space", &bytes)
        JSONValue.write(space, into: &bytes)
        object.end(&bytes)
    }

    public init(json: JSONValue, codingPath: [any CodingKey]) throws {
        let object = try JSONObjectReader(json, codingPath: codingPath)
        let fields = try object.object("fields") ?? [:]
        self.init(
            space: try object.uuid("space"), collection: try object.string("collection"), id: try object.uuid("id"),
            seq: try object.int64("seq"), fields: fields,
            clocks: ClockMap.expanding(try object.clocks("clocks") ?? [:], rowClock: try object.clock("clock"), fields: fields),
            deleted: try object.bool("deleted")
        )
    }
}

extension PullResponse: JSONTextWritable, JSONTreeReadable {
    public var approximateJSONByteCount: Int {
        changes.reduce(256 + 64 * (cursors.count + keyVersions.count + resetRequired.count)) { $0 + $1.approximateWireBytes }
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        Self.writeJSON(into: &bytes, cursors: cursors, hasMore: hasMore, keyVersions: keyVersions, resetRequired: resetRequired) { bytes in
            for (index, change) in changes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                change.writeJSON(into: &bytes, clockForm: clockForm)
            }
        }
    }

    /// Writes a reply whose changes `writeChanges` writes, comma-separated, between the brackets of `changes` (or of
    /// `pages`, in the rows layout): the server's, whose changes were written as it read them (``ChangeRowWriter``).
    public static func writeJSON(
        into bytes: inout [UInt8], layout: PullLayout = .changes, cursors: [UUID: Int64], hasMore: Bool, keyVersions: [UUID: Int],
        resetRequired: [UUID], changes writeChanges: (inout [UInt8]) -> Void
    ) {
        var object = JSONObjectWriter(&bytes)
        object.key(layout == .rows ? "pages" : "changes", &bytes)
        bytes.append(UInt8(ascii: "["))
        writeChanges(&bytes)
        bytes.append(UInt8(ascii: "]"))
        object.key("cursors", &bytes)
        JSONValue.write(cursors, into: &bytes)
        object.key("hasMore", &bytes)
        JSONValue.bool(hasMore).write(into: &bytes)
        object.key("keyVersions", &bytes)
        JSONValue.write(keyVersions, into: &bytes)
        object.key("resetRequired", &bytes)
        JSONValue.array(resetRequired.map { .string($0.lowercasedText) }).write(into: &bytes)
        object.end(&bytes)
    }

    public init(json: JSONValue, codingPath: [any CodingKey]) throws {
        let object = try JSONObjectReader(json, codingPath: codingPath)
        let changes = if let pages = try object.array("pages") {
            try Self.changes(inPages: pages, codingPath: object.path("pages"))
        } else {
            try object.items("changes", as: Change.self)
        }
        var resetRequired: [UUID] = []
        for (index, item) in (try object.array("resetRequired") ?? []).enumerated() {
            guard case .string(let text) = item, let id = UUID(wireText: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: object.path("resetRequired") + [WireKey(index: index)], debugDescription: "Not a UUID."))
            }
            resetRequired.append(id)
        }
        _ = try object.required("cursors")
        let cursors = try object.spaceKeyed("cursors", as: Int64.self) ?? [:]
        self.init(
            changes: changes, cursors: cursors, hasMore: try object.bool("hasMore"), resetRequired: resetRequired,
            keyVersions: try object.spaceKeyed("keyVersions", as: Int.self) ?? [:]
        )
    }
}

extension Mutation: JSONTextWritable, JSONTreeReadable {
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

    public init(json: JSONValue, codingPath: [any CodingKey]) throws {
        let object = try JSONObjectReader(json, codingPath: codingPath)
        // Read in the order `init(from:)` reads, so the first problem reported is the same.
        let (mutationID, space, collection, id) = (
            try object.int64("mutationId"), try object.uuid("space"), try object.string("collection"), try object.uuid("id")
        )
        guard let op = Operation(rawValue: try object.string("op")) else {
            throw DecodingError.dataCorrupted(.init(codingPath: object.path("op"), debugDescription: "Cannot initialize Operation from invalid String value."))
        }
        self.init(
            mutationId: mutationID, space: space, collection: collection, id: id, op: op,
            fields: try object.object("fields") ?? [:], clocks: try object.clocks("clocks") ?? [:]
        )
    }
}

extension PushRequest: JSONTextWritable, JSONTreeReadable {
    public var approximateJSONByteCount: Int {
        mutations.reduce(256 + 64 * cursors.count) { total, mutation in
            total + 200 + (mutation.storedJSON.map { $0.fields.utf8.count + $0.clocks.utf8.count } ?? 400)
        }
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        if !cursors.isEmpty {
            object.key("cursors", &bytes)
            JSONValue.write(cursors, into: &bytes)
        }
        object.key("deviceId", &bytes)
        JSONValue.write(deviceId, into: &bytes)
        if let follows {
            object.key("follows", &bytes)
            bytes.append(contentsOf: String(follows).utf8)
        }
        object.key("mutations", &bytes)
        JSONObjectWriter.array(mutations, &bytes)
        object.end(&bytes)
    }

    public init(json: JSONValue, codingPath: [any CodingKey]) throws {
        let object = try JSONObjectReader(json, codingPath: codingPath)
        let deviceID = try object.uuid("deviceId")
        let mutations = try object.items("mutations", as: Mutation.self)
        self.init(
            deviceId: deviceID, mutations: mutations, cursors: try object.spaceKeyed("cursors", as: Int64.self) ?? [:],
            follows: try object.optionalInt64("follows")
        )
    }
}

extension MutationResult: JSONTextWritable, JSONTreeReadable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        if let clocks {
            object.key("clocks", &bytes)
            ClockMap.write(clocks, into: &bytes)
        }
        if let code {
            object.key("code", &bytes)
            JSONValue.write(code, into: &bytes)
        }
        if let message {
            object.key("message", &bytes)
            JSONValue.write(message, into: &bytes)
        }
        object.key("mutationId", &bytes)
        bytes.append(contentsOf: String(mutationId).utf8)
        object.key("status", &bytes)
        JSONValue.write(status.rawValue, into: &bytes)
        object.end(&bytes)
    }

    public init(json: JSONValue, codingPath: [any CodingKey]) throws {
        let object = try JSONObjectReader(json, codingPath: codingPath)
        let mutationID = try object.int64("mutationId")
        guard let status = Status(rawValue: try object.string("status")) else {
            throw DecodingError.dataCorrupted(.init(codingPath: object.path("status"), debugDescription: "Cannot initialize Status from invalid String value."))
        }
        self.init(
            mutationId: mutationID, status: status, code: try object.optionalString("code"),
            message: try object.optionalString("message"), clocks: try object.clocks("clocks")
        )
    }
}

extension PushResponse: JSONTextWritable, JSONTreeReadable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        object.key("cursors", &bytes)
        JSONValue.write(cursors, into: &bytes)
        object.key("lastMutationId", &bytes)
        bytes.append(contentsOf: String(lastMutationId).utf8)
        if let maxInFlight {
            object.key("maxInFlight", &bytes)
            bytes.append(contentsOf: String(maxInFlight).utf8)
        }
        object.key("results", &bytes)
        JSONObjectWriter.array(results, &bytes)
        object.end(&bytes)
    }

    public init(json: JSONValue, codingPath: [any CodingKey]) throws {
        let object = try JSONObjectReader(json, codingPath: codingPath)
        let results = try object.items("results", as: MutationResult.self)
        self.init(
            results: results, lastMutationId: try object.int64("lastMutationId"),
            cursors: try object.spaceKeyed("cursors", as: Int64.self) ?? [:],
            maxInFlight: try object.optionalInt64("maxInFlight").map { Int(clamping: $0) }
        )
    }
}

extension PullResponse {
    /// The changes of a reply in the rows layout (``PullLayout/rows``), in order: each row is read as the object the
    /// changes layout has for it, so both layouts share one reading of a change. A field without a value is in the
    /// change only when `clocks` names it (it was cleared); otherwise it was never written.
    static func changes(inPages pages: [JSONValue], codingPath: [any CodingKey]) throws -> [Change] {
        var changes: [Change] = []
        for (pageIndex, page) in pages.enumerated() {
            let path = codingPath + [WireKey(index: pageIndex)]
            let object = try JSONObjectReader(page, codingPath: path)
            let space = try object.required("space"), collection = try object.required("collection")
            guard case .array(let columnNames) = try object.required("columns"), case .array(let rows) = try object.required("rows") else {
                throw DecodingError.typeMismatch([JSONValue].self, .init(codingPath: path, debugDescription: "A page's columns and rows are arrays."))
            }
            let columns = try columnNames.map { column in
                guard case .string(let name) = column else {
                    throw DecodingError.dataCorrupted(.init(codingPath: object.path("columns"), debugDescription: "A column name is not a string."))
                }
                return name
            }
            let sync = ChangeRowWriter.rowSyncColumns
            guard columns.starts(with: sync), Set(columns).count == columns.count else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: object.path("columns"), debugDescription: "Columns must be \(sync.joined(separator: ", ")), then distinct field names."
                ))
            }
            for (rowIndex, row) in rows.enumerated() {
                let rowPath = object.path("rows") + [WireKey(index: rowIndex)]
                guard case .array(let values) = row, values.count == columns.count else {
                    throw DecodingError.dataCorrupted(.init(codingPath: rowPath, debugDescription: "A row must be an array of \(columns.count) values."))
                }
                let named = values[4].objectValue ?? [:]
                var fields: [String: JSONValue] = [:]
                for index in sync.count..<columns.count where !values[index].isNull || named[columns[index]] != nil {
                    fields[columns[index]] = values[index]
                }
                var change: [String: JSONValue] = [
                    "space": space, "collection": collection, "id": values[0], "seq": values[1], "deleted": values[2],
                    "fields": .object(fields), "clocks": values[4],
                ]
                change["clock"] = values[3]
                changes.append(try Change(json: .object(change), codingPath: rowPath))
            }
        }
        return changes
    }
}
