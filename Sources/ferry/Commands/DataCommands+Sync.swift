import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry sync`: fetches the server's schema, pushes the outbox and pulls every space once.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Push local changes and pull the server's, once (refreshes the cached schema too)."
    )

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let profile = try ClientProfile(options)
        _ = try profile.signedInUserID()
        let client = SyncClient(auth: profile.makeAuthClient())
        let schema = try await client.schema()
        try profile.saveSchema(schema)
        let store = try profile.openStore(schema: schema)
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        let engine = SyncEngine(store: store, remote: client, configuration: configuration, logger: ClientProfile.quietLogger("ferry.sync"))
        let report = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            let report = try await engine.sync()
            group.cancelAll()
            return report
        }
        let pending = try store.pendingCount()
        var human = "Synced: \(report.requests) requests, pushed \(report.pushed), pulled \(report.pulled), applied \(report.applied)"
        if report.rejected > 0 { human += ", rejected \(report.rejected) (see 'ferry doctor')" }
        if pending > 0 { human += ", \(pending) still pending" }
        Output.emit(json: options.json, human: human + ".", [
            "requests": report.requests, "pushed": report.pushed, "pulled": report.pulled, "applied": report.applied,
            "rejected": report.rejected, "pending": pending, "reset_spaces": report.resetSpaces,
        ])
    }
}
