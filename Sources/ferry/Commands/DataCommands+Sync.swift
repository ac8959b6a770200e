import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry sync`: fetches the server's schema, pushes the outbox and pulls every space once.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Push local changes and pull the server's, once (refreshes the cached schema too).",
        discussion: """
            With --watch, syncs, then keeps the server's realtime stream open and syncs whenever another device \
            commits (and every 60 seconds), printing one line per sync (one JSON object per line with --json), \
            until interrupted (Ctrl-C), which exits 0.
            """
    )

    @OptionGroup var options: ClientOptions
    @Flag(help: "Print a line on standard output after each step (pushed and pulled so far).") var progress = false
    @Flag(help: "Keep running: sync on every realtime poke and print a line per sync, until interrupted.") var watch = false
    @Option(name: .customLong("batch-size"), help: "Mutations per push request (1…1000).") var batchSize = 1000

    func run() async throws {
        let profile = try ClientProfile(options)
        _ = try profile.signedInUserID()
        let client = SyncClient(auth: profile.makeAuthClient())
        let schema = try await client.schema()
        try profile.saveSchema(schema)
        let store = try profile.openStore(schema: schema)
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = watch ? .seconds(60) : nil
        configuration.realtime = watch
        // Other ferry commands on this profile (ferry put) write the same store: push what they wrote within a second.
        configuration.externalWritesPollInterval = watch ? .seconds(1) : nil
        guard (1...1000).contains(batchSize) else {
            throw CommandFailure(message: "--batch-size is between 1 and 1000", status: 64)
        }
        configuration.pushBatchSize = batchSize
        let engine = SyncEngine(store: store, remote: client, encryption: try profile.encryption(client), configuration: configuration)
        if watch {
            try await SyncWatch(engine: engine, json: options.json).run()
            return
        }
        let lines = progress, bar = !progress && !options.json && isatty(STDERR_FILENO) == 1
        let report = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            if lines || bar {
                let updates = engine.statusUpdates()
                group.addTask { await Self.show(updates, asLines: lines) }
            }
            let report = try await engine.sync()
            group.cancelAll()
            return report
        }
        if bar { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if store.schema != schema { try profile.saveSchema(store.schema) }  // the sync followed a newer server schema
        let pending = try store.pendingCount()
        var human = "Synced: \(report.requests) requests, pushed \(report.pushed), pulled \(report.pulled), applied \(report.applied)"
        if report.rejected > 0 { human += ", rejected \(report.rejected) (see 'ferry doctor')" }
        if report.sealedKeys > 0 { human += ", sealed \(report.sealedKeys) key(s)" }
        if report.lockedSpaces > 0 {
            human += ", \(report.lockedSpaces) encrypted space(s) locked: this device has no key for them yet (a trusted device of a member hands it"
                + " over at its next sync; a pending device must be trusted first, see 'ferry devices ls')"
        }
        if report.blobsUploaded + report.blobsDownloaded > 0 {
            human += ", files: \(report.blobsUploaded) up (\(Self.bytes(report.blobBytesSent))), \(report.blobsDownloaded) down (\(Self.bytes(report.blobBytesReceived)))"
        }
        let waitingFiles = try store.blobTransfers().filter { !$0.failed && $0.direction == .upload }.count
        if waitingFiles > 0 { human += ", \(waitingFiles) file(s) still uploading" }
        if pending > 0 { human += ", \(pending) still pending" }
        Output.emit(json: options.json, human: human + ".", [
            "requests": report.requests, "pushed": report.pushed, "pulled": report.pulled, "applied": report.applied,
            "rejected": report.rejected, "pending": pending, "reset_spaces": report.resetSpaces,
            "sealed_keys": report.sealedKeys, "locked_spaces": report.lockedSpaces,
            "blobs_uploaded": report.blobsUploaded, "blobs_downloaded": report.blobsDownloaded,
            "blob_bytes_sent": report.blobBytesSent, "blob_bytes_received": report.blobBytesReceived,
        ])
    }

    /// A byte count for people: `512 B`, `3.2 MiB`.
    static func bytes(_ count: Int64) -> String {
        count < 1024 ? "\(count) B" : count < 1 << 20 ? String(format: "%.1f KiB", Double(count) / 1024) : String(format: "%.1f MiB", Double(count) / 1_048_576)
    }

    /// One quiet sync with the server's current schema, for commands that change keys (trust, revoke, encrypted spaces).
    static func syncOnce(_ profile: ClientProfile, client: SyncClient) async throws -> SyncReport {
        let schema = try await client.schema()
        try profile.saveSchema(schema)
        let store = try profile.openStore(schema: schema)
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        configuration.realtime = false
        let engine = SyncEngine(store: store, remote: client, encryption: try profile.encryption(client), configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            defer { group.cancelAll() }
            return try await engine.sync()
        }
    }

    /// Prints each step: a line per step on standard output, or one line rewritten in place on a terminal.
    static func show(_ updates: AsyncStream<SyncStatus>, asLines: Bool) async {
        var last: SyncProgress?
        for await status in updates {
            guard let step = status.progress, step != last, step.pushed + step.pulled > 0 || step.blobs != nil else { continue }
            last = step
            var text = "progress: pushed \(step.pushed) of \(step.pushTotal), pulled \(step.pulled)"
            if let blobs = step.blobs, let current = blobs.current {
                text += ", file \(current.sha256.prefix(8)) \(bytes(blobs.currentDone)) of \(bytes(current.size))"
            }
            if asLines {
                FileHandle.standardOutput.write(Data((text + "\n").utf8))
            } else {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
            }
        }
    }
}
