import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `GET /sync/v1/export` and `GET /auth/v1/admin/users/{id}/export`: a user's data as a ZIP, read back with Python's
/// `zipfile` (a reader that is not ours), on both engines.
@Suite("Export: a user's data as a ZIP")
struct ExportTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("the archive holds each of the user's records and files, shared spaces included, and nothing of another user", arguments: TestEngine.available)
    func ownDataOnly(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var ada = try await SyncDevice.signUp(server, "ada")
            var grace = try await SyncDevice.signUp(server, "grace")
            var stranger = try await SyncDevice.signUp(server, "stranger")
            let choir = try await ada.createSpace("Choir")
            try await ada.share(choir.id, with: grace, as: .member)

            let audio = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let hash = BlobRoutesTests.hash(audio)
            #expect(try await ada.patch(BlobRoutesTests.path(ada.userID, hash), audio, offset: 0, length: audio.count).status == 204)
            let pushed = try await ada.push([
                ada.upsert("sermons", ["title": "Ada's advent", "date": "2026-11-29T10:00:00Z", "audio": BlobRoutesTests.reference(hash, audio.count)]),
                ada.upsert("sermons", space: choir.id, ["title": "Choir rehearsal", "date": "2026-11-30T10:00:00Z"]),
            ])
            #expect(pushed.results.allSatisfy { $0.status == .applied }, "\(pushed.results)")
            let deleted = UUID()
            _ = try await ada.push([ada.upsert("sermons", deleted, ["title": "Deleted draft", "date": "2026-11-01T10:00:00Z"])])
            _ = try await ada.push([ada.delete("sermons", deleted)])
            _ = try await grace.push([grace.upsert("sermons", space: choir.id, ["title": "Grace in the choir", "date": "2026-12-01T10:00:00Z"])])
            _ = try await grace.push([grace.upsert("sermons", ["title": "Grace alone", "date": "2026-12-02T10:00:00Z"])])
            _ = try await stranger.push([stranger.upsert("sermons", ["title": "Stranger's secret", "date": "2026-12-03T10:00:00Z"])])

            let reply = try await ada.request("GET", "/sync/v1/export")
            #expect(reply.status == 200 && reply.header("Content-Type") == "application/zip", "\(reply.status) \(reply.text.prefix(200))")
            #expect(reply.header("Content-Disposition")?.hasPrefix("attachment; filename=\"ferry-export-") == true)
            let archive = try Self.unzip(reply.body)
            #expect(Set(archive.keys).isSuperset(of: ["README.txt", "account.json", "profile.json", "devices.json", "spaces.json", "records/sermons.json"]))
            let account = try JSONSerialization.jsonObject(with: try #require(archive["account.json"])) as? [String: Any]
            #expect(account?["email"] as? String == ada.session.user.email)
            let sermons = try JSONSerialization.jsonObject(with: try #require(archive["records/sermons.json"])) as? [[String: Any]] ?? []
            #expect(Set(sermons.compactMap { $0["title"] as? String }) == ["Ada's advent", "Choir rehearsal", "Grace in the choir"],
                    "her records and her spaces' records; not deleted ones, not another user's personal ones")
            #expect(sermons.allSatisfy { $0["_space"] != nil && $0["id"] != nil })
            #expect(archive["files/\(ada.userID.lowercasedText)/\(hash)"] == audio, "the file a record names, byte for byte: \(archive.keys.sorted())")
            let everything = archive.values.map { String(decoding: $0, as: UTF8.self) }.joined()
            #expect(!everything.contains("Stranger's secret") && !everything.contains("Grace alone") && !everything.contains(stranger.session.user.email))
            let devices = try JSONSerialization.jsonObject(with: try #require(archive["devices.json"])) as? [[String: Any]]
            #expect(devices?.map { $0["id"] as? String } == [ada.deviceID.lowercasedText])

            // An operator exports any user with the service-role key; nobody else reaches that route.
            let admin = try await server.send("GET", "/auth/v1/admin/users/\(ada.userID.lowercasedText)/export", headers: [
                "apikey": server.server.keys.serviceRoleKey, "Authorization": "Bearer \(server.server.keys.serviceRoleKey)",
            ])
            #expect(admin.status == 200)
            #expect(try Self.unzip(admin.body)["records/sermons.json"] == archive["records/sermons.json"])
            let byUser = try await grace.request("GET", "/auth/v1/admin/users/\(ada.userID.lowercasedText)/export")
            #expect(byUser.status == 401 || byUser.status == 403, "\(byUser.status)")
            let unknown = try await server.send("GET", "/auth/v1/admin/users/\(UUID().lowercasedText)/export", headers: [
                "apikey": server.server.keys.serviceRoleKey, "Authorization": "Bearer \(server.server.keys.serviceRoleKey)",
            ])
            #expect(unknown.status == 404 && unknown.errorCode == "user_not_found")
            #expect(try await server.send("GET", "/sync/v1/export").status == 401)
            let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: server.server.configuration.dataDirectory + "/exports")) ?? []
            #expect(leftovers.isEmpty, "archives are deleted once sent: \(leftovers)")
        }
    }

    /// The entries of a ZIP, read by Python's `zipfile` (which checks each entry's CRC-32).
    static func unzip(_ data: Data) throws -> [String: Data] {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.url.appending(path: "archive.zip").path
        try data.write(to: URL(fileURLWithPath: path))
        let script = "import zipfile,json,sys,base64; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; "
            + "print(json.dumps({n: base64.b64encode(z.read(n)).decode() for n in z.namelist()}))"
        let process = try ChildProcess("python3", arguments: ["-c", script, path], environment: ["PATH": "/usr/bin:/bin:/usr/local/bin"])
        let output = process.standardOutput!.readDataToEndOfFile()
        #expect(process.waitUntilExit() == 0, "python3's zipfile refused the archive")
        let entries = try JSONSerialization.jsonObject(with: output) as? [String: String] ?? [:]
        return entries.compactMapValues { Data(base64Encoded: $0) }
    }
}
