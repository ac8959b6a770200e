import FerryCore
import FerrySecurity
import Foundation

/// Where a PostgreSQL database's blob bytes live: in the database, or in one folder (`--blob-dir`).
///
/// The first start records it (`ferry_settings`, `blob_store`), and a folder gets a file naming it
/// (``markerName``, holding the id the database records). Every later start must agree: an instance started without
/// `--blob-dir`, or with a folder that is not this database's (another database's, or an empty mount point where the
/// shared volume failed to mount), would answer 404 for every stored file, and its blob collector would take the
/// files it cannot see for unreferenced ones.
enum BlobLocation: Equatable, Sendable {
    case database
    case folder(UUID)

    /// The file in a blob folder that names it.
    static let markerName = "ferry-blob-folder"

    init?(recorded: String) {
        if recorded == "database" {
            self = .database
        } else if recorded.hasPrefix("folder "), let id = UUID(uuidString: String(recorded.dropFirst("folder ".count))) {
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
    /// returns the location to record: the one recorded, or when there is none yet (or the database holds no blob
    /// yet: `isEmpty`), the one this instance is started with, marking a folder as this database's.
    static func claim(recorded: String?, folder: String?, databaseHoldsNoBlobs isEmpty: Bool) throws(ServerStartupError) -> BlobLocation {
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
            return .database
        }
        let marker = try readMarker(in: folder)
        switch stored {
        case .folder(let id):
            guard marker == id else { throw wrongFolder(folder, marker: marker) }
            return .folder(id)
        case .database where !isEmpty:
            throw ServerStartupError(
                .blobLocationMismatch,
                "this database keeps its blobs in PostgreSQL (it ran without --blob-dir) and holds some; start without --blob-dir: Ferry does not move stored blobs"
            )
        case .database, nil:
            if let marker { throw wrongFolder(folder, marker: marker) }
            let id = UUID()
            do {
                try OwnerOnlyFile.write(Data((id.lowercasedText + "\n").utf8), to: URL(filePath: folder).appending(path: markerName))
            } catch {
                throw ServerStartupError(.dataDirectoryUnusable, "cannot write \(markerName) in the blob folder \(folder): \(error)")
            }
            return .folder(id)
        }
    }

    private static func readMarker(in folder: String) throws(ServerStartupError) -> UUID? {
        let path = URL(filePath: folder).appending(path: markerName).path()
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let id = UUID(uuidString: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ServerStartupError(.blobLocationMismatch, "\(path) does not hold a folder id: restore it, or give this database another folder")
        }
        return id
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
