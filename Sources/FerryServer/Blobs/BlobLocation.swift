import FerryCore
import FerrySecurity
import Foundation

/// Where a PostgreSQL database's blob bytes live: in the database, or in one folder (`--blob-dir`).
///
/// The first start records it (`ferry_settings`, `blob_store`), and a folder gets a file naming it
/// (``markerName``, holding the id the database records). Every later start must agree: an instance started without
/// `--blob-dir`, or with a folder that is not this database's (another database's, or an empty mount point where the
/// shared volume failed to mount), would answer 404 for every stored file, and its blob collector would take the
/// files it cannot see for unreferenced ones; one started with a folder while others still write into PostgreSQL
/// would split the blobs between the two. Switching is a deliberate step (deleting the record), never a start's.
enum BlobLocation: Equatable, Sendable {
    case database
    case folder(UUID)

    /// The file in a blob folder that names it.
    static let markerName = "ferry-blob-folder"

    init?(recorded: String) {
        if recorded == "database" {
            self = .database
        } else if recorded.hasPrefix("folder "), let id = UUID(wireText: String(recorded.dropFirst("folder ".count))) {
            self = .folder(id)
        } else {
            return nil
        }
    }

    var recorded: String {
        switch self {
        case .database: "database"
        case .folder(let id): "folder \(id.lowercasedText)"
        }
    }

    /// Checks `folder` (the instance's `--blob-dir`, if any) against the location `recorded` for the database, and
    /// returns the location to record: the one recorded or, at the database's first start, the one this instance is
    /// started with, and whether this call wrote a new folder's marker (to be removed if the record is not stored).
    ///
    /// - Parameter databaseNamesFiles: the database already names stored files (Storage objects), so a folder
    ///   without a marker must hold some: an empty one is a volume not mounted, not a new folder.
    static func claim(recorded: String?, folder: String?, databaseNamesFiles: Bool) throws(ServerStartupError) -> (location: BlobLocation, markerWritten: Bool) {
        let stored = try recorded.map { text throws(ServerStartupError) in
            guard let location = BlobLocation(recorded: text) else {
                throw ServerStartupError(.blobLocationMismatch, "this database records its blobs as '\(text)', which this ferry does not know: run the newer ferry that wrote it")
            }
            return location
        }
        guard let folder else {
            if case .folder = stored {
                throw ServerStartupError(
                    .blobLocationMismatch,
                    "this database keeps its blob files in a folder (--blob-dir): start every instance with --blob-dir naming that folder"
                )
            }
            return (.database, false)
        }
        let marker = try readMarker(in: folder)
        switch stored {
        case .folder(let id):
            guard marker == id else { throw wrongFolder(folder, marker: marker) }
            return (.folder(id), false)
        case .database:
            throw ServerStartupError(
                .blobLocationMismatch,
                "this database keeps its blobs in PostgreSQL (it first ran without --blob-dir): start without --blob-dir. "
                    + "Ferry does not move stored blobs; to use a folder while it holds none, DELETE FROM ferry_settings WHERE name = 'blob_store'"
            )
        case nil:
            if let marker { throw wrongFolder(folder, marker: marker) }
            let blobs = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/blobs")) ?? []
            if databaseNamesFiles, blobs.isEmpty { throw wrongFolder(folder, marker: nil) }
            let id = UUID()
            try writeMarker(id, in: folder)
            return (.folder(id), true)
        }
    }

    /// The marker of `folder`, if it has one.
    static func readMarker(in folder: String) throws(ServerStartupError) -> UUID? {
        let path = markerPath(in: folder)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path),
              let id = UUID(wireText: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw ServerStartupError(.blobLocationMismatch, "\(path) cannot be read or does not hold a folder id: restore it, or give this database another folder")
        }
        return id
    }

    /// Creates the marker, only if there is none: two databases claiming one new folder at once cannot both have it.
    private static func writeMarker(_ id: UUID, in folder: String) throws(ServerStartupError) {
        let path = markerPath(in: folder)
        do {
            try OwnerOnlyPath.folder(folder)
        } catch {
            throw ServerStartupError(.dataDirectoryUnusable, "cannot create the blob folder \(folder): \(error)")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw wrongFolder(folder, marker: id) }
            throw ServerStartupError(.dataDirectoryUnusable, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let text = Array((id.lowercasedText + "\n").utf8)
        guard write(descriptor, text, text.count) == text.count, fsync(descriptor) == 0 else {
            unlink(path)
            throw ServerStartupError(.dataDirectoryUnusable, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the marker this start wrote, when the database did not record it after all.
    static func removeMarker(in folder: String) {
        unlink(markerPath(in: folder))
    }

    static func markerPath(in folder: String) -> String {
        URL(filePath: folder).appending(path: markerName).path()
    }

    private static func wrongFolder(_ folder: String, marker: UUID?) -> ServerStartupError {
        guard marker != nil else {
            return ServerStartupError(
                .blobLocationMismatch,
                "\(folder) is not this database's blob folder (it has no \(markerName) file): is the shared volume mounted there?"
            )
        }
        return ServerStartupError(
            .blobLocationMismatch,
            "\(folder) holds another database's blobs (its \(markerName) names a folder this database does not use): give each database a folder of its own"
        )
    }
}
