import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry put COLLECTION [--id UUID] [--space SPACE] FIELD=VALUE…`: writes a record locally and queues it.
struct PutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Create or update a record in the local store (pushed by the next 'ferry sync').",
        discussion: """
            VALUE is read as JSON when it parses (42, true, [\"a\"], null), else as text. For a blob field, FIELD=@PATH \
            attaches the file at PATH: it is copied into the store's blob cache and uploaded by the next sync, before the \
            record. Prints the record's id.
            """
    )

    @OptionGroup var options: ClientOptions
    @Argument(help: "The collection.") var collection: String
    @Option(help: "The record's id (a new one when absent; an existing id updates that record).") var id: String?
    @Option(help: "The space of a new record: its id, or its name when unique. [default: your personal space]") var space: String?
    @Argument(help: "FIELD=VALUE pairs.") var assignments: [String] = []

    func run() async throws {
        let profile = try ClientProfile(options)
        let store = try profile.openStore()
        var fields = try RecordText.parseAssignments(assignments)
        let definition = try store.collection(named: collection)
        let recordID = try id.map { try RecordText.uuid($0, what: "--id") }
        var explicitSpace: UUID?
        if let space { explicitSpace = try await SpacesCommand.resolve(space, options) }
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), assignment[assignment.index(after: equals)...].hasPrefix("@") else { continue }
            let name = String(assignment[..<equals])
            guard definition.field(named: name)?.type == .blob else { continue }
            let path = String(assignment[assignment.index(equals, offsetBy: 2)...])
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CommandFailure(message: "cannot read the file '\(path)' for \(name)", status: 66)
            }
            let url = URL(fileURLWithPath: path)
            let target = try explicitSpace ?? recordID.flatMap { try store.fetch(collection: collection, id: $0)?.space } ?? store.defaultSpace
            if let target, try store.encryptedSpaces()[target] != nil || store.pendingSpaces().contains(where: { $0.id == target }) {
                // Encrypted on this device under the space's key: no network needed, only this profile's device key.
                let client = SyncClient(auth: profile.makeAuthClient())
                let engine = SyncEngine(store: store, remote: client, encryption: try profile.encryption(client))
                fields[name] = try await engine.attachFile(at: url, contentType: ContentType.guess(url.pathExtension), space: target).json
            } else {
                fields[name] = try store.attachFile(at: url, contentType: ContentType.guess(url.pathExtension)).json
            }
        }
        let record = try store.save(collection: collection, id: recordID, space: explicitSpace, fields: fields)
        Output.emit(json: options.json, human: RecordText.id(record.id), RecordText.object(record))
    }
}

/// `ferry get COLLECTION ID [--children]`: one record from the local store.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Show a record from the local store.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The collection.") var collection: String
    @Argument(help: "The record's id.") var id: String
    @Flag(help: "Also show its children (records of collections whose parent is this one).") var children = false

    func run() async throws {
        let store = try ClientProfile(options).openStore()
        let recordID = try RecordText.uuid(id, what: "ID")
        guard let record = try store.fetch(collection: collection, id: recordID) else {
            throw CommandFailure(message: "no record \(RecordText.id(recordID)) in '\(collection)'")
        }
        var object = RecordText.members(record)
        var lines = [RecordText.line(record)]
        if children {
            let found = try store.children(of: collection, id: recordID)
            object["children"] = found.mapValues { $0.map(RecordText.object) }
            for (name, records) in found.sorted(by: { $0.key < $1.key }) {
                lines.append("\(name):")
                lines += records.map { "  " + RecordText.line($0) }
            }
        }
        Output.emit(json: options.json, human: lines.joined(separator: "\n"), object)
    }
}

/// `ferry ls COLLECTION [--where FIELD=VALUE]…`: the records of a collection in the local store.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the records of a collection in the local store.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The collection.") var collection: String
    @Option(name: .customLong("where"), help: "Only records whose FIELD equals VALUE (may repeat).") var filters: [String] = []

    func run() async throws {
        let filter = try RecordText.parseAssignments(filters)
        let records = try ClientProfile(options).openStore().fetchAll(collection: collection, where: filter)
        let human = records.isEmpty
            ? "No records in '\(collection)'\(filters.isEmpty ? "" : " match") on this device (run 'ferry sync' to fetch others' writes)."
            : records.map(RecordText.line).joined(separator: "\n")
        Output.emit(json: options.json, human: human, ["records": records.map(RecordText.object)])
    }
}

/// `ferry rm COLLECTION ID`: deletes a record (and its children) locally and queues the delete.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a record and its children (pushed by the next 'ferry sync').")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The collection.") var collection: String
    @Argument(help: "The record's id.") var id: String

    func run() async throws {
        let recordID = try RecordText.uuid(id, what: "ID")
        try ClientProfile(options).openStore().delete(collection: collection, id: recordID)
        Output.emit(json: options.json, human: "Deleted \(RecordText.id(recordID)).", ["deleted": RecordText.id(recordID), "collection": collection])
    }
}

/// Parsing and printing records for the data commands.
enum RecordText {
    static func parseAssignments(_ assignments: [String]) throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw CommandFailure(message: "'\(assignment)' is not FIELD=VALUE", status: 64)
            }
            let raw = String(assignment[assignment.index(after: equals)...])
            fields[String(assignment[..<equals])] = JSONValue(jsonText: raw) ?? .string(raw)
        }
        return fields
    }

    static func uuid(_ text: String, what: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw CommandFailure(message: "\(what) '\(text)' is not a UUID", status: 64)
        }
        return id
    }

    static func id(_ id: UUID) -> String { id.lowercasedText }

    /// `<id> field=value … [pending]`.
    static func line(_ record: LocalRecord) -> String {
        let fields = record.fields.filter { !$0.value.isNull }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.jsonText)" }
        let state = record.syncState == .synced ? "" : " [\(record.syncState.name)]"
        return ([id(record.id)] + fields).joined(separator: " ") + state
    }

    /// A record's `--json` form.
    static func object(_ record: LocalRecord) -> JSONValue { .members(members(record)) }

    static func members(_ record: LocalRecord) -> [String: any JSONOutput] {
        var object: [String: any JSONOutput] = [
            "id": id(record.id), "collection": record.collection, "space": id(record.space),
            "fields": record.fields, "sync_state": record.syncState.name, "seq": record.seq,
        ]
        if case .rejected(let code, let message) = record.syncState {
            object["rejection"] = ["code": code, "message": message]
        }
        return object
    }
}

/// The MIME type of a file by its extension, for `FIELD=@PATH` (`application/octet-stream` when unknown).
enum ContentType {
    static func guess(_ pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "m4a", "mp4a", "aac": "audio/mp4"
        case "mp3": "audio/mpeg"
        case "wav": "audio/wav"
        case "caf": "audio/x-caf"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic": "image/heic"
        case "gif": "image/gif"
        case "pdf": "application/pdf"
        case "txt", "md": "text/plain"
        case "json": "application/json"
        default: "application/octet-stream"
        }
    }
}
