import ArgumentParser
import FerryVault
import Foundation
import Logging

/// `ferry vault …`: a git-backed notes vault (the notes-vault app) over libgit2.
struct VaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "A git-backed notes vault: choose a folder, sync it with a git remote, diagnose it.",
        subcommands: [
            VaultOpenCommand.self, VaultInitCommand.self, VaultCloneCommand.self, VaultListCommand.self, VaultSyncCommand.self,
            VaultStatusCommand.self, VaultOriginCommand.self, VaultAuthCommand.self, VaultDiagnoseCommand.self,
        ]
    )
}

extension ClientOptions {
    /// The profile's vault state (`<home>/profiles/<name>/`); vault commands need no server.
    func vaultProfile() throws -> VaultProfile {
        let name = profileName
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw CommandFailure(message: "a profile name uses letters, digits, '-' and '_' only, not '\(name)'", status: 64)
        }
        // Library logs go to standard error, warnings and worse only: standard output is the command's result.
        let logger = Logger(label: "ferry.vault") { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        return VaultProfile(folder: homeFolder.appending(path: "profiles/\(name)"), logger: logger)
    }
}

/// Runs `body`, turning a ``VaultError`` into the CLI's one-line failure with its code.
func vaultCommand<Value>(_ body: () async throws -> Value) async throws -> Value {
    do {
        return try await body()
    } catch let error as VaultError {
        throw CommandFailure(message: "\(error.message) (\(error.code))", status: error.code == .invalidArgument ? 64 : 1)
    }
}

/// `ferry vault open PATH`: chooses the vault folder (replacing the previous one).
struct VaultOpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "open", abstract: "Choose an existing folder as the vault (replaces the previous one).")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The vault folder.") var path: String
    @Flag(inversion: .prefixedNo, help: "Sync whenever the vault is opened (remembered).") var pullOnOpen: Bool?
    @Option(name: .customLong("author-name"), help: "The name on sync commits (remembered). [default: Ferry]") var authorName: String?
    @Option(name: .customLong("author-email"), help: "The email on sync commits (remembered). [default: ferry@localhost]") var authorEmail: String?
    @Option(name: .customLong("message-template"), help: "The commit message template: {{date}}, {{numFiles}}, {{hostname}}, {{files}} (remembered).")
    var messageTemplate: String?

    func run() async throws {
        try await vaultCommand {
            let profile = try options.vaultProfile()
            let vault = try profile.choose(URL(filePath: path))
            let settings = try profile.settingsStore.update { settings in
                if let pullOnOpen { settings.autoSync.pullOnOpen = pullOnOpen }
                if let authorName { settings.author.name = authorName }
                if let authorEmail { settings.author.email = authorEmail }
                if let messageTemplate { settings.commitMessageTemplate = messageTemplate }
            }
            let location = vault.discoverRepository().location
            var object: [String: any JSONOutput] = [
                "vault": vault.path, "repository": location?.gitDirectory.path(percentEncoded: false), "repository_kind": location?.kind.rawValue,
            ]
            var human = "Vault: \(vault.path) (repository: \(location.map { "\($0.kind.rawValue) at \($0.gitDirectory.path(percentEncoded: false))" } ?? "none yet; run 'ferry vault init'"))"
            if settings.autoSync.pullOnOpen, location != nil {
                let report = try await vault.sync()
                human += "\nSynced: \(report.summary)"
                object["sync"] = report.encodedJSON
            }
            Output.emit(json: options.json, human: human, object)
        }
    }
}

/// `ferry vault init`: creates the vault's repository.
struct VaultInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create the vault's git repository.")

    @OptionGroup var options: ClientOptions
    @Option(help: "inline: <vault>/.git; separate: in the profile's git storage, nothing inside the vault (iCloud-safe).")
    var storage: RepositoryStorage = .inline
    @Option(name: .customLong("branch"), help: "The initial branch.") var branch = "main"

    func run() async throws {
        try await vaultCommand {
            let vault = try options.vaultProfile().current()
            let location = try vault.initialiseRepository(storage: storage, initialBranch: branch)
            Output.emit(json: options.json, human: "Initialised \(storage == .inline ? "an" : "a") \(storage.rawValue) repository at \(location.gitDirectory.path(percentEncoded: false)) for \(vault.path)", [
                "vault": vault.path, "repository": location.gitDirectory.path(percentEncoded: false), "storage": storage.rawValue,
            ])
        }
    }
}

extension RepositoryStorage: ExpressibleByArgument {}

/// `ferry vault clone URL PATH`: chooses PATH as the vault and clones URL into it.
struct VaultCloneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clone", abstract: "Clone a repository into a folder and choose it as the vault.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The repository URL (https://…, ssh://…, git@host:…, or a path).") var url: String
    @Argument(help: "The vault folder (created when missing).") var path: String
    @Option(help: "inline or separate (see 'ferry vault init').") var storage: RepositoryStorage = .inline

    func run() async throws {
        try await vaultCommand {
            let profile = try options.vaultProfile()
            try FileManager.default.createDirectory(at: URL(filePath: path), withIntermediateDirectories: true)
            let vault = try profile.choose(URL(filePath: path))
            let report = try await vault.clone(from: url, storage: storage)
            Output.emit(json: options.json, human: "Cloned into \(vault.path): \(report.summary)", ["vault": vault.path, "sync": report.encodedJSON])
        }
    }
}

/// `ferry vault ls [FOLDER]`: child folders first, then notes.
struct VaultListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List a vault folder: its folders first, then its notes.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "A folder inside the vault. [default: the vault itself]") var folder: String = ""

    func run() async throws {
        try await vaultCommand {
            let listing = try options.vaultProfile().current().list(folder)
            let lines = listing.folders.map { "\($0)/" } + listing.notes
            Output.emit(json: options.json, human: lines.joined(separator: "\n"), [
                "folder": listing.folder, "folders": listing.folders, "notes": listing.notes,
            ])
        }
    }
}

/// `ferry vault origin set URL [--global]`.
struct VaultOriginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "origin", abstract: "Set the vault's origin.", subcommands: [Set.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the vault's origin (and the global default with --global).")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The remote URL.") var url: String
        @Flag(help: "Also make it the global default, which every vault without its own origin uses.") var global = false

        func run() async throws {
            try await vaultCommand {
                let vault = try options.vaultProfile().current()
                try vault.setOrigin(url, global: global)
                Output.emit(json: options.json, human: "Origin of \(vault.path): \(url)\(global ? " (also the global default)" : "")", [
                    "vault": vault.path, "origin": url, "global": global,
                ])
            }
        }
    }
}
