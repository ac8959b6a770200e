import FerryCore
import Foundation

/// The console's backups page: the backups in the data folder (taken by hand and scheduled), and one taken now, as
/// `ferry backup create` takes it. The embedded database only: PostgreSQL is backed up with its own tools.
struct ConsoleBackups: Sendable {
    let dataDirectory: String
    let isEmbedded: Bool

    private var folders: [String] { [dataDirectory + "/backups", dataDirectory + "/backups/scheduled"] }

    /// Reads each backup's manifest through ``FileWork`` (a manifest lists every blob file).
    func list() async throws -> JSONValue {
        guard isEmbedded else { return ConsoleService.list([], total: 0) }
        let folders = self.folders
        return try await FileWork.run { Self.list(folders) }
    }

    private static func list(_ folders: [String]) -> JSONValue {
        var items: [(created: String, item: JSONValue)] = []
        for folder in folders {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("ferry-backup-") {
                guard let data = FileManager.default.contents(atPath: "\(folder)/\(name)/backup.json"),
                      let manifest = try? JSONDecoder().decode(BackupManifest.self, from: data)
                else { continue }
                items.append((manifest.createdAt, Self.item(name: name, folder: folder, manifest)))
            }
        }
        let sorted = items.sorted { $0.created > $1.created }.map(\.item)
        return ConsoleService.list(sorted, total: sorted.count)
    }

    /// Takes a backup now, off the cooperative pool (it copies the database and links every blob file).
    func create() async throws -> JSONValue {
        guard isEmbedded else {
            throw ServiceError(.conflict, .notSupported, "This server runs on PostgreSQL: back it up with pg_dump or PITR (see docs/operations.md).")
        }
        let (dataDirectory, destination) = (self.dataDirectory, self.dataDirectory + "/backups")
        let (path, manifest): (String, BackupManifest)
        do {
            (path, manifest) = try await FileWork.run {
                try DataDirectoryBackup.create(dataDirectory: dataDirectory, into: destination)
            }
        } catch let error as BackupError {
            throw ServiceError(.internalFailure, .internalError, "The backup failed: \(error)")
        }
        return Self.item(name: URL(filePath: path).lastPathComponent, folder: destination, manifest)
    }

    static func item(name: String, folder: String, _ manifest: BackupManifest) -> JSONValue {
        [
            "name": .string(name), "created_at": .string(manifest.createdAt), "scheduled": .bool(folder.hasSuffix("/scheduled")),
            "bytes": .number(Double(manifest.database.bytes + manifest.blobs.reduce(0) { $0 + $1.bytes })),
            "blobs": .number(Double(manifest.blobs.count)),
        ]
    }
}
