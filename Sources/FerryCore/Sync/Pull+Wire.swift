import Foundation

// The pull request's and the pull reply's one JSON reader and one writer each (docs/sync.md, "Pull"). The server
// writes a reply's changes as it reads them from the database, in either layout (its `ChangeRowWriter`), between the
// brackets this writer leaves.

extension PullRequest: JSONTextWritable {
    public var approximateJSONByteCount: Int { 64 + 56 * (cursors.count + exclude.count) }

    /// Members left out when they hold their default (no limit, nothing excluded, the field form, the changes layout).
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        if clockForm != .field {
            object.key("clockForm", &bytes)
            JSONValue.write(clockForm.rawValue, into: &bytes)
        }
        object.key("cursors", &bytes)
        JSONValue.write(cursors, into: &bytes)
        if !exclude.isEmpty {
            object.key("exclude", &bytes)
            JSONValue.array(exclude.map(\.lowercasedText).sorted().map(JSONValue.string)).write(into: &bytes)
        }
        if layout != .changes {
            object.key("layout", &bytes)
            JSONValue.write(layout.rawValue, into: &bytes)
        }
        if let limit {
            object.key("limit", &bytes)
            bytes.append(contentsOf: String(limit).utf8)
        }
        object.end(&bytes)
    }
}

extension PullRequest: JSONStreamReadable {
    /// Every member may be missing or `null`, which means its default; a member given twice counts the last time.
    package init(stream parser: inout JSONTextParser) throws {
        let defaults = PullRequest()
        var request = defaults
        try parser.readObject { parser, key in
            switch key {
            case "cursors": request.cursors = try parser.readSpaceKeyed(Int64.self)
            case "limit":
                request.limit = nil
                guard try !parser.readNull() else { return }
                guard let limit = Int(exactly: try parser.readInt64()) else { throw parser.corrupted("Out of range.") }
                request.limit = limit
            case "exclude":
                request.exclude = []
                guard try !parser.readNull() else { return }
                try parser.readArray { parser in request.exclude.insert(try parser.readUUID()) }
            case "clockForm":
                request.clockForm = defaults.clockForm
                guard try !parser.readNull() else { return }
                guard let form = ClockForm(rawValue: try parser.readString()) else { throw parser.corrupted("clockForm must be field or row.") }
                request.clockForm = form
            case "layout":
                request.layout = defaults.layout
                guard try !parser.readNull() else { return }
                guard let layout = PullLayout(rawValue: try parser.readString()) else { throw parser.corrupted("layout must be changes or rows.") }
                request.layout = layout
            default: try parser.skipValue()
            }
        }
        self = request
    }
}

extension Change: JSONTextWritable {
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
}

extension PullResponse: JSONTextWritable {
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
}

extension Change: JSONStreamReadable {
    package init(stream parser: inout JSONTextParser) throws {
        var (space, collection, id, seq, deleted): (UUID?, String?, UUID?, Int64?, Bool?)
        var (fields, clocks): ([String: JSONValue], (clocks: [String: HLC], text: String?)) = ([:], ([:], nil))
        var rowClock: (clock: HLC, text: String)?
        try parser.readObject { parser, key in
            switch key {
            case "space": space = try parser.readUUID()
            case "collection": collection = try parser.readString()
            case "id": id = try parser.readUUID()
            case "seq": seq = try parser.readInt64()
            case "fields": fields = try parser.readFields()
            case "clock":
                guard try !parser.readNull() else { return }
                let text = try parser.readString()
                guard let clock = HLC(text) else { throw parser.corrupted("Not a clock.") }
                rowClock = (clock, text)
            case "clocks": clocks = try parser.readClocksKeepingText()
            case "deleted": deleted = try parser.readBool()
            default: try parser.skipValue()
            }
        }
        let all = ClockMap.expanding(clocks.clocks, rowClock: rowClock?.clock, fields: fields)
        self.init(
            space: try parser.required(space, "space"), collection: try parser.required(collection, "collection"), id: try parser.required(id, "id"),
            seq: try parser.required(seq, "seq"), fields: fields, clocks: all, deleted: try parser.required(deleted, "deleted")
        )
        if let rowClock {
            // The text a field-form reply would have carried, built from the texts that came.
            guard clocks.text != nil || clocks.clocks.isEmpty else { return }
            self.keepClocksText(ClockMap.rowFormText(rowClock: rowClock.text, exceptions: clocks.text, exceptionKeys: clocks.clocks, fields: fields))
        } else {
            self.keepClocksText(clocks.text)
        }
    }
}

extension PullResponse: JSONStreamReadable {
    package init(stream parser: inout JSONTextParser) throws {
        var (changes, cursors, hasMore): ([Change]?, [UUID: Int64]?, Bool?)
        var (resetRequired, keyVersions): ([UUID], [UUID: Int]) = ([], [:])
        try parser.readObject { parser, key in
            switch key {
            case "changes":
                var items: [Change] = []
                try parser.readArray { parser in items.append(try Change(stream: &parser)) }
                changes = items
            case "pages":
                throw parser.corrupted("This reply is in the rows layout, which clients that ask for it read; ask for the changes layout.")
            case "cursors":
                guard try !parser.readNull() else { throw parser.mismatch([String: Int64].self, "an object of cursors") }
                cursors = try parser.readSpaceKeyed(Int64.self)
            case "hasMore": hasMore = try parser.readBool()
            case "resetRequired":
                var spaces: [UUID] = []
                if try !parser.readNull() {
                    try parser.readArray { parser in spaces.append(try parser.readUUID()) }
                }
                resetRequired = spaces
            case "keyVersions": keyVersions = try parser.readSpaceKeyed(Int.self)
            default: try parser.skipValue()
            }
        }
        self.init(
            changes: try parser.required(changes, "changes"), cursors: try parser.required(cursors, "cursors"),
            hasMore: try parser.required(hasMore, "hasMore"), resetRequired: resetRequired, keyVersions: keyVersions
        )
    }
}
