@testable import FerryServer
import FerryTesting
import Foundation
import Logging
import Testing

/// Scheduled backups and the data folder's lock, on the embedded engine (PostgreSQL is backed up with pg_dump).
@Suite("Backups: the schedule and the lock")
struct BackupScheduleTests {
    @Test("a scheduled backup keeps the newest N; each verifies; restoring onto an open database is refused")
    func scheduleAndLock() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let data = folder.url.appending(path: "data").path()
        let storage = try SQLiteStorage(path: data + "/ferry.sqlite")
        _ = try await storage.migrate(Migration.server)
        let scheduler = BackupScheduler(dataDirectory: data, interval: .seconds(3600), keep: 2, logger: Logger(label: "test"))
        for hour in 0..<3 { await scheduler.backUp(now: Date(timeIntervalSince1970: 1_800_000_000 + Double(hour) * 3600)) }
        let kept = try FileManager.default.contentsOfDirectory(atPath: scheduler.folder).sorted()
        #expect(kept.count == 2 && kept.last?.hasSuffix("Z") == true, "\(kept)")
        for backup in kept {
            let manifest = try DataDirectoryBackup.verify(scheduler.folder + "/" + backup)
            #expect(manifest.migrations == Migration.server.map(\.version))
        }
        #expect(throws: BackupError.self) { try DataDirectoryBackup.restore(scheduler.folder + "/" + kept[0], dataDirectory: data) }
        try await storage.close()
        let replaced = try DataDirectoryBackup.restore(scheduler.folder + "/" + kept[0], dataDirectory: data)
        #expect(FileManager.default.fileExists(atPath: replaced + "/ferry.sqlite"))
        let reopened = try SQLiteStorage(path: data + "/ferry.sqlite")
        #expect(try await reopened.appliedMigrationVersions() == Migration.server.map(\.version))
        try await reopened.close()
    }

    @Test("a folder without an embedded database, and a manifest pointing outside its backup, are refused")
    func refusals() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let error = #expect(throws: BackupError.self) { try DataDirectoryBackup.create(dataDirectory: folder.url.path(), into: folder.url.path() + "/b") }
        #expect(error?.code == .noEmbeddedDatabase)
        let fake = folder.url.appending(path: "fake")
        try FileManager.default.createDirectory(at: fake, withIntermediateDirectories: true)
        try #"{"format":1,"created_at":"x","migrations":[],"database":{"path":"../../etc/passwd","bytes":1,"sha256":"x"},"keys":[],"blobs":[]}"#
            .write(to: fake.appending(path: "backup.json"), atomically: true, encoding: .utf8)
        let outside = #expect(throws: BackupError.self) { try DataDirectoryBackup.verify(fake.path()) }
        #expect(outside?.code == .backupDamaged)
    }
}
