import Crypto
import FerryCore
import FerrySecurity
import Foundation
import GRDB

/// Online backups of an embedded (SQLite) server's data folder, and their restore (docs/operations.md, "Backups").
///
/// A backup is a folder: `ferry.sqlite` (a consistent snapshot taken with `VACUUM INTO` while the server runs), `keys/`
/// (the signing secret and API keys), `blobs/<space>/<sha256>` (the files, hard-linked when on the same file system:
/// they never change once written) and `backup.json`, the manifest with every file's size and SHA-256.
public enum DataDirectoryBackup {
    static let databaseFile = "ferry.sqlite"

    /// Backs `dataDirectory` up into a new folder under `destination` (made 0700); returns the folder and its manifest.
    ///
    /// Blobs are gathered before and after the snapshot: a record in the snapshot names a blob uploaded before it, which
    /// the first pass or the second finds (the collector never deletes a blob younger than the retention).
    public static func create(dataDirectory: String, into destination: String, now: Date = Date()) throws(BackupError) -> (folder: String, manifest: BackupManifest) {
        let data = URL(filePath: dataDirectory)
        let database = data.appending(path: databaseFile).path()
        guard FileManager.default.fileExists(atPath: database) else {
            throw BackupError(.noEmbeddedDatabase, "\(dataDirectory) has no \(databaseFile): back up a PostgreSQL server with pg_dump (docs/operations.md, \"Backups\")")
        }
        let name = "ferry-backup-" + Self.stamp(now)
        var folder = URL(filePath: destination).appending(path: name)
        return try Self.io("writing the backup into \(folder.path())") {
            try OwnerOnlyPath.folder(destination)
            // Made atomically, so two backups in one second (two operators, a schedule and a console click) each get a
            // folder of their own: the second is `…-2`.
            var attempt = 1
            while true {
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
                    break
                } catch where FileManager.default.fileExists(atPath: folder.path()) && attempt < 100 {
                    attempt += 1
                    folder = URL(filePath: destination).appending(path: "\(name)-\(attempt)")
                }
            }
            try OwnerOnlyPath.folder(folder.path())
            try copyBlobs(from: data, to: folder)
            let snapshot = folder.appending(path: databaseFile).path()
            let migrations = try snapshotDatabase(database, to: snapshot)
            try copyBlobs(from: data, to: folder)
            for key in [ServerKeys.secretFile, ServerKeys.anonKeyFile, ServerKeys.serviceRoleKeyFile]
            where FileManager.default.fileExists(atPath: data.appending(path: key).path()) {
                try OwnerOnlyPath.folder(folder.appending(path: "keys").path())
                try FileManager.default.copyItem(at: data.appending(path: key), to: folder.appending(path: key))
                try OwnerOnlyPath.file(folder.appending(path: key).path())
            }
            let manifest = BackupManifest(
                createdAt: Timestamp.format(now), migrations: migrations, database: try describe(folder, databaseFile),
                keys: try files(in: folder, under: "keys").map { try describe(folder, $0) },
                // A blob's name is its SHA-256, checked when it was stored; hashing gigabytes again would only repeat that.
                blobs: try files(in: folder, under: "blobs").map { path in
                    BackupManifest.File(path: path, bytes: try size(folder.appending(path: path)), sha256: URL(filePath: path).lastPathComponent)
                }
            )
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try OwnerOnlyFile.write(try encoder.encode(manifest), to: folder.appending(path: BackupManifest.fileName))
            return (folder.path(), manifest)
        }
    }

    /// Checks every file of the backup in `folder` against its manifest (blobs hashed too); returns the manifest.
    @discardableResult
    public static func verify(_ folder: String) throws(BackupError) -> BackupManifest {
        let root = URL(filePath: folder)
        let manifest: BackupManifest
        do {
            guard isRegularFile(root.appending(path: BackupManifest.fileName)) else { throw CocoaError(.fileReadNoSuchFile) }
            manifest = try JSONDecoder().decode(BackupManifest.self, from: Data(contentsOf: root.appending(path: BackupManifest.fileName)))
        } catch {
            throw BackupError(.backupDamaged, "\(folder) has no readable \(BackupManifest.fileName): it is not a Ferry backup, or it is damaged")
        }
        guard manifest.format == 1 else {
            throw BackupError(.backupTooNew, "the backup's format \(manifest.format) is newer than this ferry's; restore it with a newer ferry")
        }
        let keyFiles = Set([ServerKeys.secretFile, ServerKeys.anonKeyFile, ServerKeys.serviceRoleKeyFile])
        let files = [manifest.database] + manifest.keys + manifest.blobs
        guard manifest.database.path == databaseFile, manifest.keys.allSatisfy({ keyFiles.contains($0.path) }),
              manifest.blobs.allSatisfy({ isBlobPath($0.path) && $0.path.hasSuffix("/" + $0.sha256) }),
              Set(files.map(\.path)).count == files.count
        else {
            // Only the layout a backup has, each file once and each blob under its SHA-256: a manifest naming ../, an
            // absolute path or anything else is damaged, not followed.
            throw BackupError(.backupDamaged, "the manifest of \(folder) names files a Ferry backup does not hold: it is damaged")
        }
        for file in files {
            let url = root.appending(path: file.path)
            // Every folder on the way a real folder, not a link: restore links and copies these files into the data
            // folder, so a link would bring in files from anywhere (another key, for one).
            let folders = file.path.split(separator: "/").dropLast().indices.map { end in
                file.path.split(separator: "/")[...end].joined(separator: "/")
            }
            guard folders.allSatisfy({ isDirectory(root.appending(path: $0)) }), isRegularFile(url) else {
                throw BackupError(.backupDamaged, "\(file.path) in \(folder) is missing, not a regular file, or in a folder that is a link")
            }
            let actual = try Self.io("reading \(url.path())") { (try size(url), try hash(url)) }
            guard actual.0 == file.bytes, actual.1 == file.sha256 else {
                throw BackupError(.backupDamaged, "\(file.path) in \(folder) differs from the manifest (size or SHA-256): the backup is damaged")
            }
        }
        return manifest
    }

    /// Restores the backup in `folder` onto `dataDirectory`, whose server must be stopped. What the folder held before is
    /// moved to `<data-dir>/replaced-<time>/` (returned), never deleted.
    public static func restore(_ folder: String, dataDirectory: String, now: Date = Date()) throws(BackupError) -> String {
        let data = URL(filePath: dataDirectory)
        try Self.io("creating \(dataDirectory)") { try OwnerOnlyPath.folder(dataDirectory) }
        let lock: DataDirectoryLock
        do {
            lock = try DataDirectoryLock.take(dataDirectory, exclusive: true)
        } catch {
            throw BackupError(.serverRunning, "a server is running on \(dataDirectory): stop it, then restore")
        }
        defer { withExtendedLifetime(lock) {} }
        let manifest = try verify(folder)
        let known = Set(Migration.server.map(\.version))
        if let unknown = manifest.migrations.first(where: { !known.contains($0) }) {
            throw BackupError(.backupTooNew, "the backup has migration \(unknown), which this ferry does not know; restore it with the ferry that made it")
        }
        let stamp = Self.stamp(now)
        let staged = data.appending(path: "restoring-" + stamp), replaced = data.appending(path: "replaced-" + stamp)
        let source = URL(filePath: folder)
        // Staged beside the data first (a full disk fails here, with nothing touched), then swapped in by renames.
        try Self.io("copying the backup into \(staged.path())") {
            do {
                try OwnerOnlyPath.folder(staged.path())
                // The database and the keys are copied, never linked: the restored server writes to the one and sets
                // the others' modes, and the backup must stay as it was. Blobs never change, so they may be linked.
                for (files, link) in [([manifest.database] + manifest.keys, false), (manifest.blobs, true)] {
                    for file in files {
                        let target = staged.appending(path: file.path)
                        try OwnerOnlyPath.folder(target.deletingLastPathComponent().path())
                        if link {
                            try linkOrCopy(source.appending(path: file.path), to: target)
                        } else {
                            try FileManager.default.copyItem(at: source.appending(path: file.path), to: target)
                        }
                    }
                }
                try moveSequencesPastDevices(staged.appending(path: databaseFile).path())
            } catch {
                try? FileManager.default.removeItem(at: staged)
                throw error
            }
        }
        return try Self.io("swapping the restored data into \(dataDirectory)") {
            try OwnerOnlyPath.folder(replaced.path())
            // Every rename done so far, undone in reverse if a later one fails: the data folder is whole either way.
            var done: [(from: URL, to: URL)] = []
            do {
                for item in [databaseFile, databaseFile + "-wal", databaseFile + "-shm", "blobs", "keys"]
                where FileManager.default.fileExists(atPath: data.appending(path: item).path()) {
                    try FileManager.default.moveItem(at: data.appending(path: item), to: replaced.appending(path: item))
                    done.append((data.appending(path: item), replaced.appending(path: item)))
                }
                for item in [databaseFile, "blobs", "keys"] where FileManager.default.fileExists(atPath: staged.appending(path: item).path()) {
                    try FileManager.default.moveItem(at: staged.appending(path: item), to: data.appending(path: item))
                    done.append((staged.appending(path: item), data.appending(path: item)))
                }
            } catch {
                for (from, to) in done.reversed() { try? FileManager.default.moveItem(at: to, to: from) }
                try? FileManager.default.removeItem(at: staged)
                throw error
            }
            try FileManager.default.removeItem(at: staged)
            return replaced.path()
        }
    }

    /// How far a restore moves every sequence number: further than any space's count of commits will get.
    static let restoreJump: Int64 = 1 << 40

    /// Devices that synced past the backup hold cursors the restored database would hand out again to other commits, and
    /// would then skip them. So every row's `_seq` and every space's `seq` move up by ``restoreJump``, and each space's
    /// `purged_seq` with them: a cursor taken before the restore is below it, and that device starts the space over
    /// (keeping its outbox), while a full pull ends past it.
    static func moveSequencesPastDevices(_ database: String) throws {
        let queue = try DatabaseQueue(path: database)
        defer { try? queue.close() }
        try queue.write { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            for table in tables where try db.columns(in: table).contains(where: { $0.name == "_seq" }) {
                try db.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET _seq = _seq + ?", arguments: [restoreJump])
            }
            try db.execute(sql: "UPDATE ferry_spaces SET seq = seq + ?, purged_seq = purged_seq + ?", arguments: [restoreJump, restoreJump])
        }
    }

    // MARK: Steps

    /// `VACUUM INTO`: a consistent copy of the live database, taken in one read transaction while the server writes.
    private static func snapshotDatabase(_ database: String, to snapshot: String) throws -> [Int] {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: database, configuration: configuration)
        try queue.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [snapshot]) }
        try queue.close()
        try OwnerOnlyPath.file(snapshot)
        let copy = try DatabaseQueue(path: snapshot, configuration: configuration)
        defer { try? copy.close() }
        return try copy.read { db in
            try db.tableExists("ferry_migrations") ? try Int.fetchAll(db, sql: "SELECT version FROM ferry_migrations ORDER BY version") : []
        }
    }

    /// Links (or copies) every complete blob not yet in the backup.
    private static func copyBlobs(from data: URL, to folder: URL) throws {
        // Blob files only: a stray file (`.DS_Store`, an editor's backup) would make the backup unrestorable.
        for path in try files(in: data, under: "blobs") where isBlobPath(path) {
            let target = folder.appending(path: path)
            guard !FileManager.default.fileExists(atPath: target.path()) else { continue }
            try OwnerOnlyPath.folder(target.deletingLastPathComponent().path())
            do {
                try linkOrCopy(data.appending(path: path), to: target)
            } catch CocoaError.fileNoSuchFile, CocoaError.fileReadNoSuchFile {
                // Collected between the listing and the link: no record of the snapshot names it.
            }
        }
    }

    /// `blobs/<space id>/<sha256>`, the one shape a blob file has.
    private static func isBlobPath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "blobs" && UUID(wireText: String(parts[1])) != nil && BlobReference.isValidHash(String(parts[2]))
    }

    /// Whether `url` is a regular file itself, not a link to one.
    private static func isRegularFile(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path())[.type] as? FileAttributeType) == .typeRegular
    }

    /// Whether `url` is a folder itself, not a link to one.
    private static func isDirectory(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path())[.type] as? FileAttributeType) == .typeDirectory
    }

    private static func linkOrCopy(_ source: URL, to target: URL) throws {
        do {
            try FileManager.default.linkItem(at: source, to: target)
        } catch {
            try FileManager.default.copyItem(at: source, to: target)
        }
    }

    /// The regular files under `folder/subfolder`, as paths relative to `folder`, sorted.
    private static func files(in folder: URL, under subfolder: String) throws -> [String] {
        let root = folder.appending(path: subfolder)
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var paths: [String] = []
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            paths.append(subfolder + "/" + url.path().dropFirst(root.path().count).trimmingPrefix("/"))
        }
        return paths.sorted()
    }

    private static func describe(_ folder: URL, _ path: String) throws -> BackupManifest.File {
        let url = folder.appending(path: path)
        return BackupManifest.File(path: path, bytes: try size(url), sha256: try hash(url))
    }

    private static func size(_ url: URL) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: url.path())[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// SHA-256 of a file, read in 1 MiB pieces.
    private static func hash(_ url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = ContentHasher()
        while let piece = try handle.readChunk(upToCount: 1 << 20) { hasher.update(piece) }
        return hasher.finalize()
    }

    private static func stamp(_ date: Date) -> String {
        Timestamp.format(date).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "").prefix(15) + "Z"
    }

    /// Runs `body`, turning a file-system failure into ``BackupError`` (`backup_io_failed`) that says what was being done.
    @discardableResult
    private static func io<Result>(_ doing: String, _ body: () throws -> Result) throws(BackupError) -> Result {
        do {
            return try body()
        } catch let error as BackupError {
            throw error
        } catch {
            throw BackupError(.backupIOFailed, "\(doing) failed: \((error as NSError).localizedDescription)")
        }
    }
}
