import ArgumentParser
import FerryClient
import FerryCore
import FerrySecurity
import Foundation

/// `ferry blob get|status`: files in blob fields.
struct BlobCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blob", abstract: "Files in blob fields: write one out, or show the transfer queue.",
        subcommands: [BlobGetCommand.self, BlobStatusCommand.self]
    )
}

/// `ferry blob get COLLECTION ID FIELD -o FILE`: writes a record's file out, downloading it if needed.
struct BlobGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Write the file in a blob field to FILE, downloading it first if this device lacks it."
    )

    @OptionGroup var options: ClientOptions
    @Argument(help: "The collection.") var collection: String
    @Argument(help: "The record's id.") var id: String
    @Argument(help: "The blob field.") var field: String
    @Option(name: .shortAndLong, help: "Where to write the file ('-' for standard output).") var output: String

    func run() async throws {
        let profile = try ClientProfile(options)
        let recordID = try RecordText.uuid(id, what: "ID")
        let store = try profile.openStore()
        guard let record = try store.fetch(collection: collection, id: recordID) else {
            throw CommandFailure(message: "no record \(RecordText.id(recordID)) in '\(collection)'")
        }
        guard let value = record.fields[field], let blob = try? BlobReference(json: value) else {
            throw CommandFailure(message: "\(collection).\(field) of \(RecordText.id(recordID)) holds no file", status: 65)
        }
        let isEncrypted = try store.encryptedSpaces()[record.space] != nil
        var source = isEncrypted ? nil : try store.cachedFile(for: blob)
        if source == nil {
            let client = SyncClient(auth: profile.makeAuthClient())
            var configuration = SyncEngine.Configuration()
            configuration.periodicInterval = nil
            configuration.realtime = false
            let engine = SyncEngine(
                store: store, remote: client, encryption: isEncrypted ? try profile.encryption(client) : nil, configuration: configuration
            )
            source = try await engine.file(collection: collection, id: recordID, field: field)
        }
        guard let source else { return }
        if output == "-" {
            let input = try FileHandle(forReadingFrom: source)
            defer { try? input.close() }
            while let chunk = try input.readChunk(upToCount: 1 << 20) { FileHandle.standardOutput.write(chunk) }
            return
        }
        let target = URL(fileURLWithPath: output)
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: source, to: target)
        Output.emit(json: options.json, human: "Wrote \(blob.size) bytes to \(output).", [
            "path": output, "sha256": blob.sha256, "size": blob.size, "content_type": blob.contentType,
        ])
    }
}

/// `ferry blob status`: the transfer queue and the cache's size.
struct BlobStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "List the files waiting to upload or download.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let store = try ClientProfile(options).openStore()
        let transfers = try store.blobTransfers()
        let cached = try store.blobCacheSize()
        var lines = transfers.map { transfer in
            var line = "\(transfer.direction.rawValue) \(transfer.blob.sha256.prefix(12)) \(transfer.collection).\(transfer.field) "
                + "\(SyncCommand.bytes(transfer.confirmed)) of \(SyncCommand.bytes(transfer.blob.size))"
            if transfer.failed { line += " [failed]" }
            if let error = transfer.lastError { line += " (\(error))" }
            return line
        }
        if lines.isEmpty { lines.append("No files waiting.") }
        lines.append("Cache: \(SyncCommand.bytes(cached)).")
        Output.emit(json: options.json, human: lines.joined(separator: "\n"), [
            "transfers": transfers.map { transfer in
                JSONValue.members([
                    "direction": transfer.direction.rawValue, "space": RecordText.id(transfer.space), "sha256": transfer.blob.sha256,
                    "size": transfer.blob.size, "content_type": transfer.blob.contentType, "collection": transfer.collection,
                    "field": transfer.field, "confirmed": transfer.confirmed, "attempts": transfer.attempts, "failed": transfer.failed,
                    "last_error": transfer.lastError.json,  // null while none, as before: a transfer's keys are fixed
                ])
            },
            "cache_bytes": cached,
        ])
    }
}
