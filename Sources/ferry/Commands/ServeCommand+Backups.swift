import ArgumentParser
import FerryServer
import Foundation

/// `ferry serve`'s scheduled backups of the embedded database.
struct BackupOptions: ParsableArguments {
    @Option(name: .customLong("backup-every"), help: "Seconds between backups of the embedded database into <data-dir>/backups/scheduled (FERRY_BACKUP_EVERY). [default: none]")
    var backupEvery: Int?

    @Option(name: .customLong("backup-keep"), help: "How many scheduled backups to keep (FERRY_BACKUP_KEEP). [default: 7]")
    var backupKeep: Int?

    func apply(to configuration: inout ServerConfiguration, environment: [String: String]) throws {
        configuration.backups.interval = try ServeSettings.seconds(backupEvery, environment, "FERRY_BACKUP_EVERY", flag: "--backup-every")
        if let keep = try backupKeep ?? environment["FERRY_BACKUP_KEEP"].map({ text in
            guard let number = Int(text) else { throw CommandFailure(message: "FERRY_BACKUP_KEEP must be a whole number, not '\(text)'", status: 64) }
            return number
        }) {
            guard (1...10_000).contains(keep) else { throw CommandFailure(message: "--backup-keep must be between 1 and 10000, not \(keep)", status: 64) }
            configuration.backups.keep = keep
        }
        if configuration.backups.interval != nil, configuration.database != nil {
            throw CommandFailure(
                message: "--backup-every backs up the embedded database only; back up PostgreSQL with pg_dump (docs/operations.md, \"Backups\")", status: 64
            )
        }
    }
}
