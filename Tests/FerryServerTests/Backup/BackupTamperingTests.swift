@testable import FerryServer
import FerryCore
import FerrySecurity
import FerryTesting
import Foundation
import Testing

/// A backup folder is input: whoever could write it may have swapped a folder for a link to files elsewhere, renamed a
/// blob or listed one file many times. `verify` (and so `restore`) refuses each as `backup_damaged`.
@Suite("Backups: a tampered backup folder")
struct BackupTamperingTests {
    /// A data folder with a database, the three key files and one blob, and a backup of it.
    static func backup(in folder: TemporaryFolder) async throws -> (backup: URL, blob: String) {
        let data = folder.url.appending(path: "data")
        let storage = try SQLiteStorage(path: data.path() + "/ferry.sqlite")
        _ = try await storage.migrate(Migration.server)
        try await storage.close()
        for file in [ServerKeys.secretFile, ServerKeys.anonKeyFile, ServerKeys.serviceRoleKeyFile] {
            try OwnerOnlyPath.folder(data.appending(path: "keys").path())
            try Data("key \(file)".utf8).write(to: data.appending(path: file))
        }
        let bytes = Data("a recording".utf8)
        var hasher = ContentHasher()
        hasher.update(bytes)
        let blob = "blobs/\(UUID().lowercasedText)/\(hasher.finalize())"
        try FileManager.default.createDirectory(at: data.appending(path: blob).deletingLastPathComponent(), withIntermediateDirectories: true)
        try bytes.write(to: data.appending(path: blob))
        let (path, _) = try DataDirectoryBackup.create(dataDirectory: data.path(), into: folder.url.appending(path: "backups").path())
        return (URL(filePath: path), blob)
    }

    static func manifest(_ backup: URL) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: backup.appending(path: "backup.json"))) as! [String: Any]
    }

    static func write(_ manifest: [String: Any], _ backup: URL) throws {
        try JSONSerialization.data(withJSONObject: manifest).write(to: backup.appending(path: "backup.json"))
    }

    static func expectDamaged(_ backup: URL, _ comment: Comment) {
        let error = #expect(throws: BackupError.self, comment) { try DataDirectoryBackup.verify(backup.path()) }
        #expect(error?.code == .backupDamaged, comment)
    }

    @Test("a folder of the backup replaced by a symbolic link to one elsewhere is damaged, and restore takes nothing from it")
    func linkedFolder() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (backup, blob) = try await Self.backup(in: folder)
        #expect(throws: Never.self) { try DataDirectoryBackup.verify(backup.path()) }
        let elsewhere = folder.url.appending(path: "elsewhere")
        try FileManager.default.moveItem(at: backup.appending(path: "keys"), to: elsewhere)
        try FileManager.default.createSymbolicLink(at: backup.appending(path: "keys"), withDestinationURL: elsewhere)
        Self.expectDamaged(backup, "keys/ is a link")
        let restore = #expect(throws: BackupError.self) { try DataDirectoryBackup.restore(backup.path(), dataDirectory: folder.url.appending(path: "data").path()) }
        #expect(restore?.code == .backupDamaged)

        try FileManager.default.removeItem(at: backup.appending(path: "keys"))
        try FileManager.default.moveItem(at: elsewhere, to: backup.appending(path: "keys"))
        let space = backup.appending(path: blob).deletingLastPathComponent()
        try FileManager.default.moveItem(at: space, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: space, withDestinationURL: elsewhere)
        Self.expectDamaged(backup, "blobs/<space>/ is a link")
    }

    @Test("a blob not named by its SHA-256, a file listed twice and a linked manifest are damaged")
    func manifestTricks() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (backup, blob) = try await Self.backup(in: folder)
        let original = try Self.manifest(backup)

        // Renamed, the manifest's hash still the content's.
        let renamed = String(blob.dropLast(64)) + String(repeating: "0", count: 64)
        try FileManager.default.moveItem(at: backup.appending(path: blob), to: backup.appending(path: renamed))
        var manifest = original
        var blobs = manifest["blobs"] as! [[String: Any]]
        blobs[0]["path"] = renamed
        manifest["blobs"] = blobs
        try Self.write(manifest, backup)
        Self.expectDamaged(backup, "a blob named by another hash")
        try FileManager.default.moveItem(at: backup.appending(path: renamed), to: backup.appending(path: blob))

        manifest = original
        manifest["blobs"] = Array(repeating: (original["blobs"] as! [[String: Any]])[0], count: 3)
        try Self.write(manifest, backup)
        Self.expectDamaged(backup, "one blob listed three times")

        try Self.write(original, backup)
        #expect(throws: Never.self) { try DataDirectoryBackup.verify(backup.path()) }
        let real = folder.url.appending(path: "manifest.json")
        try FileManager.default.moveItem(at: backup.appending(path: "backup.json"), to: real)
        try FileManager.default.createSymbolicLink(at: backup.appending(path: "backup.json"), withDestinationURL: real)
        Self.expectDamaged(backup, "backup.json is a link")
    }
}
