import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// Where a PostgreSQL database keeps its blobs (in itself, or in one `--blob-dir` folder) is recorded at its first
/// start, and every later start must agree: a wrong or missing folder would lose every stored file from view.
@Suite("Blobs: where a PostgreSQL database keeps them, checked at every start")
struct BlobLocationTests {
    static let postgres = TestEngine.available.filter { $0 == .postgres }

    static func refusal(_ configuration: ServerConfiguration) async -> ServerStartupError? {
        await #expect(throws: ServerStartupError.self) { _ = try await LiveServer.start(configuration) }
    }

    @Test("a folder becomes its database's (a 0600 file names it); the same folder starts again, no folder, an empty one or another database's is refused",
          arguments: postgres)
    func folderBelongsToItsDatabase(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var configuration = database.serverConfiguration
            let folder = database.folder + "/blobs-a"
            configuration.blobDirectory = folder
            try await LiveServer.start(configuration).stop()
            let attributes = try FileManager.default.attributesOfItem(atPath: BlobLocation.markerPath(in: folder))
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            try await LiveServer.start(configuration).stop()

            var without = configuration
            without.blobDirectory = nil
            let noFolder = await Self.refusal(without)
            #expect(noFolder?.code == .blobLocationMismatch)
            #expect(noFolder?.message.contains("--blob-dir") == true, "\(noFolder?.message ?? "")")

            var unmounted = configuration
            unmounted.blobDirectory = database.folder + "/blobs-b"
            let empty = await Self.refusal(unmounted)
            #expect(empty?.code == .blobLocationMismatch)
            #expect(empty?.message.contains("mounted") == true, "\(empty?.message ?? "")")
            #expect(!FileManager.default.fileExists(atPath: database.folder + "/blobs-b"), "a refused folder is left as it was")

            try await TestDatabase.with(.postgres) { other in
                var borrowing = other.serverConfiguration
                borrowing.blobDirectory = folder
                let taken = await Self.refusal(borrowing)
                #expect(taken?.code == .blobLocationMismatch)
                #expect(taken?.message.contains("another database") == true, "\(taken?.message ?? "")")
            }
            try await LiveServer.start(configuration).stop()  // nothing the refusals did changed what was recorded
        }
    }

    @Test("a database that ran without a folder refuses one, even while it holds no blob, until its record is deleted", arguments: postgres)
    func databaseKeepsItsBlobsUntilToldOtherwise(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var configuration = database.serverConfiguration
            try await LiveServer.start(configuration).stop()
            #expect(try await database.integer("SELECT count(*) FROM ferry_settings WHERE name = 'blob_store' AND value = 'database'") == 1)

            // Another instance, still without the folder, may be storing blobs in PostgreSQL right now.
            configuration.blobDirectory = database.folder + "/blobs"
            let refused = await Self.refusal(configuration)
            #expect(refused?.code == .blobLocationMismatch)
            #expect(refused?.message.contains("DELETE FROM ferry_settings") == true, "\(refused?.message ?? "")")

            try await database.execute(["DELETE FROM ferry_settings WHERE name = 'blob_store'"])
            try await LiveServer.start(configuration).stop()
            #expect(try await database.integer("SELECT count(*) FROM ferry_settings WHERE name = 'blob_store' AND value LIKE 'folder %'") == 1)
        }
    }

    @Test("migration 18 records a database that already holds blobs as keeping them, and leaves one that holds none to its next start",
          arguments: postgres)
    func migrationRecordsExistingBlobs(_ engine: TestEngine) async throws {
        for holdsBlobs in [true, false] {
            try await TestDatabase.with(engine) { database in
                guard case .postgres(let url) = database.location else { return }
                let storage = PostgresStorage(url: url, logger: .testing)
                try await storage.migrate(Migration.server.filter { $0.version < 18 })
                if holdsBlobs {
                    try await database.execute([
                        "INSERT INTO ferry_blob_uploads (id, content_id, length, received, updated_at) VALUES ('an-upload', gen_random_uuid(), 10, 4, now())"
                    ])
                }
                try await storage.migrate(Migration.server)
                #expect(try await database.integer("SELECT count(*) FROM ferry_settings WHERE value = 'database'") == (holdsBlobs ? 1 : 0))
            }
        }
    }

    @Test("at a first start a folder is marked once: a second claim finds it taken, and a marker-less empty folder is refused when the database names files")
    func firstClaim() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.url.path()
        let first = try BlobLocation.claim(recorded: nil, folder: path, databaseNamesFiles: false)
        #expect(first.markerWritten)
        guard case .folder(let id) = first.location else { Issue.record("not a folder: \(first.location)"); return }
        #expect(try BlobLocation.readMarker(in: path) == id)
        let again = try BlobLocation.claim(recorded: first.location.recorded, folder: path, databaseNamesFiles: true)
        #expect(again.location == first.location && !again.markerWritten)

        // Another database starting on the same folder at the same moment, before either recorded anything.
        #expect(throws: ServerStartupError.self) { try BlobLocation.claim(recorded: nil, folder: path, databaseNamesFiles: false) }

        // An upgraded server whose volume is not mounted: the database names stored files, the folder holds none.
        let empty = try TemporaryFolder()
        defer { empty.remove() }
        let unmounted = #expect(throws: ServerStartupError.self) {
            try BlobLocation.claim(recorded: nil, folder: empty.url.path(), databaseNamesFiles: true)
        }
        #expect(unmounted?.message.contains("mounted") == true)
        #expect(try BlobLocation.readMarker(in: empty.url.path()) == nil)
    }

    @Test("what a start records reads back, and text this ferry did not write, or a marker that is not an id, is refused, not guessed at")
    func recordedText() throws {
        let id = UUID()
        #expect(BlobLocation(recorded: BlobLocation.folder(id).recorded) == .folder(id))
        #expect(BlobLocation(recorded: "database") == .database)
        for unknown in ["", "folder", "folder nope", "s3 bucket", "Database"] { #expect(BlobLocation(recorded: unknown) == nil) }
        #expect(throws: ServerStartupError.self) { try BlobLocation.claim(recorded: "s3 bucket", folder: nil, databaseNamesFiles: false) }

        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try Data("not an id".utf8).write(to: URL(filePath: BlobLocation.markerPath(in: folder.url.path())))
        #expect(throws: ServerStartupError.self) { try BlobLocation.readMarker(in: folder.url.path()) }
    }
}
