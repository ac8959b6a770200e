import ArgumentParser
import FerryCore
import FerryServer
import Foundation

/// `ferry backup create|verify|restore`: online backups of an embedded server's data folder.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Back up an embedded (SQLite) server's data folder, check a backup, or restore one.",
        subcommands: [BackupCreateCommand.self, BackupVerifyCommand.self, BackupRestoreCommand.self]
    )
}

/// The data folder these commands work on: the flag, FERRY_DATA_DIR, or `ferry serve`'s default.
struct DataFolderOption: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "The server's data folder (FERRY_DATA_DIR). [default: ./ferry-data]")
    var dataDirectory: String?

    @Flag(help: "Print JSON instead of text.") var json = false

    var resolved: String {
        dataDirectory ?? ProcessInfo.processInfo.environment["FERRY_DATA_DIR"] ?? "./ferry-data"
    }
}

/// `ferry backup create [--data-dir DIR] [--to DIR]`: a consistent copy while the server runs.
struct BackupCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Back up the database, keys and files now; the server may keep running."
    )

    @OptionGroup var folder: DataFolderOption
    @Option(name: .customLong("to"), help: "Where to put the backup folder. [default: <data-dir>/backups]") var destination: String?

    func run() async throws {
        let (path, manifest) = try BackupFailure.rethrowing { () throws(BackupError) in
            try DataDirectoryBackup.create(dataDirectory: folder.resolved, into: destination ?? folder.resolved + "/backups")
        }
        let bytes = manifest.database.bytes + manifest.blobs.reduce(0) { $0 + $1.bytes }
        Output.emit(
            json: folder.json,
            human: "Backed up to \(path): the database, \(manifest.keys.count) key file(s) and \(manifest.blobs.count) file(s), \(bytes) bytes.",
            ["backup": path, "created_at": manifest.createdAt, "blobs": manifest.blobs.count, "bytes": Int(bytes)]
        )
    }
}

/// `ferry backup verify BACKUP`: every file against the manifest.
struct BackupVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify", abstract: "Check a backup's files against its manifest.")

    @Argument(help: "The backup folder (ferry-backup-…).") var backup: String
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() async throws {
        let manifest = try BackupFailure.rethrowing { () throws(BackupError) in try DataDirectoryBackup.verify(backup) }
        Output.emit(json: json, human: "\(backup) is whole: every file matches its manifest (taken \(manifest.createdAt)).", [
            "backup": backup, "created_at": manifest.createdAt, "valid": true,
        ])
    }
}

/// `ferry backup restore BACKUP [--data-dir DIR] [--yes]`: onto a stopped server's data folder.
struct BackupRestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a backup onto a stopped server's data folder (what it held is kept aside)."
    )

    @Argument(help: "The backup folder (ferry-backup-…).") var backup: String
    @OptionGroup var folder: DataFolderOption
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func run() async throws {
        if !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CommandFailure(message: "Restoring replaces the server's data: pass --yes to confirm when not on a terminal.", status: 64)
            }
            FileHandle.standardError.write(Data("Replace the data in \(folder.resolved) with \(backup)? What it holds now is kept aside. [y/N] ".utf8))
            guard readLine()?.lowercased().hasPrefix("y") == true else { throw CommandFailure(message: "Not confirmed: nothing was restored.", status: 1) }
        }
        let replaced = try BackupFailure.rethrowing { () throws(BackupError) in
            try DataDirectoryBackup.restore(backup, dataDirectory: folder.resolved)
        }
        Output.emit(
            json: folder.json,
            human: "Restored \(backup) into \(folder.resolved); what was there is in \(replaced). Devices that synced past the backup start their spaces over on their next sync; their unsent changes are kept and sent.",
            ["restored": backup, "data_dir": folder.resolved, "replaced": replaced]
        )
    }
}

/// Turns a ``BackupError`` into the CLI's one-line failure with its code.
enum BackupFailure {
    static func rethrowing<Result>(_ body: () throws(BackupError) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw CommandFailure(message: error.message, code: error.code)
        }
    }
}
