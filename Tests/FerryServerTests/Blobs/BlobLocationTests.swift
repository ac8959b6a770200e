import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// Where a PostgreSQL database keeps its blobs (in itself, or in one `--blob-dir` folder) is recorded at its first
/// start, and every later start must agree: a wrong or missing folder would lose every stored file from view.
@Suite("Blobs: where a PostgreSQL database keeps them, checked at every start")
struct BlobLocationTests {
    static func refusal(_ configuration: ServerConfiguration) async -> ServerStartupError? {
        await #expect(throws: ServerStartupError.self) { _ = try await LiveServer.start(configuration) }
    }

    @Test("a folder becomes its database's (a 0600 file names it); the same folder starts again, no folder, an empty one or another database's is refused")
    func folderBelongsToItsDatabase() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            var configuration = database.serverConfiguration
            let folder = database.folder + "/blobs-a"
            configuration.blobDirectory = folder
            try await LiveServer.start(configuration).stop()
            let marker = folder + "/" + BlobLocation.markerName
            let attributes = try FileManager.default.attributesOfItem(atPath: marker)
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
            #expect(!FileManager.default.fileExists(atPath: database.folder + "/blobs-b/" + BlobLocation.markerName))

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

    @Test("a database that ran without a folder takes one while it holds no blob, and refuses one while it holds some")
    func databaseTakesAFolderOnlyWhileEmpty() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            var configuration = database.serverConfiguration
            try await LiveServer.start(configuration).stop()
            #expect(try await database.integer("SELECT count(*) FROM ferry_settings WHERE name = 'blob_store' AND value = 'database'") == 1)

            try await database.execute([
                "INSERT INTO ferry_blob_uploads (id, content_id, length, received, updated_at) VALUES ('an-upload', gen_random_uuid(), 10, 4, now())"
            ])
            configuration.blobDirectory = database.folder + "/blobs"
            let refused = await Self.refusal(configuration)
            #expect(refused?.code == .blobLocationMismatch)
            #expect(refused?.message.contains("holds some") == true, "\(refused?.message ?? "")")

            try await database.execute(["DELETE FROM ferry_blob_uploads"])
            try await LiveServer.start(configuration).stop()
            #expect(try await database.integer("SELECT count(*) FROM ferry_settings WHERE name = 'blob_store' AND value LIKE 'folder %'") == 1)
        }
    }

    @Test("migration 18 records a database that already holds blobs as keeping them, and leaves one that holds none to its next start")
    func migrationRecordsExistingBlobs() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        for holdsBlobs in [true, false] {
            try await TestDatabase.with(.postgres) { database in
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

    @Test("what a start records reads back, and text this ferry did not write is refused, not guessed at")
    func recordedText() throws {
        let id = UUID()
        #expect(BlobLocation(recorded: BlobLocation.folder(id).recorded) == .folder(id))
        #expect(BlobLocation(recorded: "database") == .database)
        for unknown in ["", "folder", "folder nope", "s3 bucket", "Database"] { #expect(BlobLocation(recorded: unknown) == nil) }
        #expect(throws: ServerStartupError.self) { try BlobLocation.claim(recorded: "s3 bucket", folder: nil, databaseHoldsNoBlobs: true) }
    }
}
