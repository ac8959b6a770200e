import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Files in end-to-end encrypted spaces: encrypted on the device in chunks, stored as ciphertext under a hash that says
/// nothing of the plaintext, opened by another trusted device.
@Suite("Blobs in encrypted spaces, end to end")
struct EncryptedBlobEndToEndTests {
    @Test("a file attached in an encrypted space: the server's storage holds no plaintext, a trusted device reads it, a tampered chunk does not open",
          arguments: TestEngine.available)
    func encryptedAudio(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server, database in
            try await Self.run(server, database)
        }
    }

    static func run(_ server: LiveServer, _ database: TestDatabase) async throws {
        do {

            let email = uniqueEmail("sealed-audio")
            let mac = try await EncryptedDevice.signIn(server, email: email, signUp: true, name: "mac")
            _ = await mac.postLogin().run()
            let space = try mac.store.queueSpace(CreateSpaceRequest(name: "Private sermons", encrypted: true))
            try await mac.sync()
            let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
            _ = await phone.postLogin().run()
            _ = try await mac.client.trustDevice(phone.id)
            try await mac.sync()

            let marker = Data("PLAINTEXT-SERMON-\(UUID().uuidString.prefix(8))-".utf8)
            var plaintext = Data()
            while plaintext.count < 300_000 { plaintext += marker }
            let recording = FileManager.default.temporaryDirectory.appending(path: "ferry-sealed-\(UUID().uuidString).m4a")
            try plaintext.write(to: recording)
            defer { try? FileManager.default.removeItem(at: recording) }

            let clear = try mac.store.attachFile(at: recording)
            #expect(throws: StoreError.self, "a file attached in clear cannot go into an encrypted space") {
                try mac.store.save(collection: "sermons", space: space, fields: ["title": "x", "date": "2026-11-22T10:00:00Z", "audio": clear.json])
            }
            let audio = try await mac.engine.attachFile(at: recording, contentType: "audio/mp4", space: space)
            #expect(audio.sha256 != clear.sha256 && audio.contentType == "application/octet-stream", "the address reveals nothing of the file")
            let sermon = try mac.store.save(collection: "sermons", space: space, fields: ["title": "Private", "date": "2026-11-22T10:00:00Z", "audio": audio.json])
            let pushed = try await mac.sync()
            #expect(pushed.blobsUploaded == 1 && pushed.rejected == 0)
            #expect(try Data(contentsOf: try await mac.engine.file(collection: "sermons", id: sermon.id, field: "audio")) == plaintext)

            let stored = try await Self.storedBlobs(database)
            #expect(!stored.isEmpty)
            for bytes in stored {
                #expect(bytes.range(of: marker) == nil, "the server holds no plaintext of the file")
            }

            let pulled = try await phone.sync()
            #expect(pulled.blobsDownloaded == 1)
            let opened = try await phone.engine.file(collection: "sermons", id: sermon.id, field: "audio")
            #expect(try Data(contentsOf: opened) == plaintext, "a trusted device reads the file")

            // A chunk changed in the ciphertext does not open.
            let tampered = FileManager.default.temporaryDirectory.appending(path: "ferry-tampered-\(UUID().uuidString)")
            var ciphertext = try Data(contentsOf: try #require(try phone.store.cachedFile(for: audio)))
            ciphertext[ciphertext.count / 2] ^= 1
            try ciphertext.write(to: tampered)
            defer { try? FileManager.default.removeItem(at: tampered) }
            let key = try #require(try await phone.spaceKey(space, version: 1))
            #expect(throws: EncryptionError.self) {
                try BlobCipher.decrypt(tampered, to: tampered.appendingPathExtension("out"), key: key, space: space)
            }
        }
    }

    /// Every blob's bytes as the server stores them: files under the data folder, or parts in PostgreSQL.
    static func storedBlobs(_ database: TestDatabase) async throws -> [Data] {
        switch database.location {
        case .sqlite:
            let root = database.folder + "/blobs"
            var blobs: [Data] = []
            for space in try FileManager.default.contentsOfDirectory(atPath: root) {
                for name in try FileManager.default.contentsOfDirectory(atPath: "\(root)/\(space)") {
                    blobs.append(try Data(contentsOf: URL(fileURLWithPath: "\(root)/\(space)/\(name)")))
                }
            }
            return blobs
        case .postgres:
            return try await database.strings("SELECT encode(data, 'base64') FROM ferry_blob_parts ORDER BY part_offset")
                .compactMap { Data(base64Encoded: $0.replacingOccurrences(of: "\n", with: "")) }
        }
    }
}
