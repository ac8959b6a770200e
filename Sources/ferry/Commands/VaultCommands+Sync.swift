import ArgumentParser
import FerryCore
import FerryVault
import Foundation

/// `ferry vault sync [--watch --interval N]`: stage all → commit → fetch → merge → push.
struct VaultSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Sync the vault: commit every change, pull, merge, push.",
        discussion: "Conflicting edits keep the local note and write the remote version beside it; no conflict markers are written."
    )

    @OptionGroup var options: ClientOptions
    @Flag(help: "Keep syncing every --interval seconds until interrupted.") var watch = false
    @Option(help: "Seconds between syncs with --watch (at least 10; remembered). [default: the profile's, else 60]") var interval: Int?
    @Option(help: "This machine's name in commits and conflict copies. [default: the host name]") var hostname: String?

    func run() async throws {
        try await vaultCommand {
            let profile = try options.vaultProfile()
            let vault = try profile.current()
            var syncOptions = SyncOptions()
            if let hostname { syncOptions.hostname = hostname }
            guard watch else {
                let report = try await vault.sync(syncOptions)
                Self.print(report, json: options.json)
                return
            }
            let settings = try profile.settingsStore.load()
            let seconds = try AutoSyncSettings.validatedInterval(interval ?? settings.autoSync.intervalSeconds ?? 60)
            try profile.settingsStore.update { $0.autoSync.intervalSeconds = seconds }
            let auto = try VaultAutoSync(vault: vault, intervalSeconds: seconds, pullOnOpen: true, options: syncOptions)
            let json = options.json
            await auto.run { outcome in
                switch outcome {
                case .success(let report): Self.print(report, json: json)
                case .failure(let error):
                    FileHandle.standardError.write(Data("ferry: sync failed: \(error.message) (\(error.code))\n".utf8))
                }
            }
        }
    }

    static func print(_ report: VaultSyncReport, json: Bool) {
        var object = report.encodedJSON.objectValue ?? [:]
        object["pushed"] = .bool(report.pushed)
        object["summary"] = .string(report.summary)
        Output.emit(json: json, human: "Synced: \(report.summary)", JSONValue.object(object))
    }
}

/// `ferry vault status`: the vault, its repository, origin, credentials and auto-sync.
struct VaultStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the vault, its repository, origin and credentials.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await vaultCommand {
            let profile = try options.vaultProfile()
            let vault = try profile.current()
            let location = vault.discoverRepository().location
            let origin = try vault.resolveOrigin(writeBack: false)
            let settings = try profile.settingsStore.load()
            let credentials = try profile.credentialStore.load()
            let human = """
                vault: \(vault.path)
                repository: \(location.map { "\($0.gitDirectory.path(percentEncoded: false)) (\($0.kind.rawValue))" } ?? "missing")
                origin: \(origin.url ?? "none") (\(origin.source.rawValue))
                credentials: token \(credentials.token == nil ? "not set" : "set"), ssh key \(credentials.sshKey?.privateKeyPath ?? "not set")
                auto-sync: \(settings.autoSync.intervalSeconds.map { "every \($0) s" } ?? "off"), pull on open \(settings.autoSync.pullOnOpen ? "on" : "off")
                """
            Output.emit(json: options.json, human: human, [
                "vault": vault.path, "repository": location?.gitDirectory.path(percentEncoded: false), "repository_kind": location?.kind.rawValue,
                "origin": origin.url, "origin_source": origin.source.rawValue, "token_set": credentials.token != nil,
                "interval_seconds": settings.autoSync.intervalSeconds, "pull_on_open": settings.autoSync.pullOnOpen,
            ])
        }
    }
}

/// `ferry vault diagnose [--json]`: the notes-vault app's diagnostics line and the critical signals.
struct VaultDiagnoseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "diagnose", abstract: "Diagnose the vault: repository discovery, origins, remotes, known problems.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await vaultCommand {
            let diagnostics = try options.vaultProfile().diagnose()
            let lines = [diagnostics.line] + diagnostics.candidates.map { "  candidate: \($0)" }
                + diagnostics.signals.map { "  signal \($0.code): \($0.explanation)" }
            Output.emit(json: options.json, human: lines.joined(separator: "\n"), diagnostics.encodedJSON)
        }
    }
}
