import Foundation
import Logging
import ServiceLifecycle

/// `ferry serve --backup-every SECONDS --backup-keep N`: backs the embedded database up on a schedule into
/// `<data-dir>/backups/scheduled`, keeping the newest `keep` backups there.
public struct BackupSchedule: Sendable {
    /// The time between backups; `nil` takes none.
    public var interval: Duration?
    /// How many scheduled backups to keep; older ones are deleted after each new one.
    public var keep = 7

    /// Creates a schedule that takes no backups.
    public init() {}
}

/// Runs a ``BackupSchedule``; each backup is taken off the request path, and a failure is logged and tried again next time.
struct BackupScheduler: Service {
    let dataDirectory: String
    let interval: Duration
    let keep: Int
    let logger: Logger

    /// `<data-dir>/backups/scheduled`: apart from backups taken by hand, which pruning never touches.
    var folder: String { URL(filePath: dataDirectory).appending(path: "backups/scheduled").path() }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await backUp(now: Date())
            }
        }
    }

    /// One backup, then the oldest beyond `keep` deleted. The copying blocks, so it runs through ``FileWork``, not on the
    /// threads that serve requests.
    func backUp(now: Date) async {
        do {
            let (dataDirectory, folder) = (self.dataDirectory, self.folder)
            let (path, manifest) = try await FileWork.run {
                try DataDirectoryBackup.create(dataDirectory: dataDirectory, into: folder, now: now)
            }
            logger.info("backup taken", metadata: ["ferry.backup.path": "\(path)", "ferry.backup.blobs": "\(manifest.blobs.count)"])
            let backups = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("ferry-backup-") }.sorted()
            for old in backups.dropLast(keep) {
                try FileManager.default.removeItem(atPath: URL(filePath: folder).appending(path: old).path())
            }
        } catch {
            logger.error("backup failed", metadata: ["ferry.error": "\(error)"])
        }
    }
}
