import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Storage's edges: membership checked when an upload commits and when a signed URL is used, signed URLs bound to the
/// content, user content that cannot run in a browser, names that look like no other, races, quotas, and the URLs the
/// server writes.
@Suite("Storage: limits and membership at the edges")
struct StorageHardeningTests {
    static let schema = """
        version: 1
        collections:
          notes:
            fields:
              text: text
        buckets:
          audio: { allowed_mime_types: ["audio/*"] }
          files: {}
        """

    /// An owner, and a member of the owner's new space `space`.
    struct Shared {
        let owner: SyncDevice
        let member: SyncDevice
        let space: String

        static func make(_ server: any ServerUnderTest) async throws -> Shared {
            let owner = try await SyncDevice.signUp(server, "owner")
            let member = try await SyncDevice.signUp(server, "member")
            let space = try await owner.createSpace("Shared files")
            try await owner.share(space.id, with: member, as: .member)
            return Shared(owner: owner, member: member, space: space.id.uuidString.lowercased())
        }

        func removeMember() async throws {
            let reply = try await owner.send("DELETE", "/sync/v1/spaces/\(space)/members/\(member.userID.uuidString.lowercased())", [String: String]())
            #expect(reply.status == 204 || reply.status == 200, "removal: \(reply.status) \(reply.text)")
        }
    }

    static func upload(_ device: SyncDevice, _ path: String, _ body: String, type: String = "text/plain", upsert: Bool = false) async throws -> HTTPClient.Reply {
        var headers = ["Content-Type": type]
        if upsert { headers["x-upsert"] = "true" }
        return try await device.request("POST", "/storage/v1/object/\(path)", headers: headers, body: Data(body.utf8))
    }

    static func signedURL(_ device: SyncDevice, _ path: String) async throws -> String {
        let reply = try await device.request(
            "POST", "/storage/v1/object/sign/\(path)", headers: ["Content-Type": "application/json"], body: Data(#"{"expiresIn":3600}"#.utf8)
        )
        return try #require(try reply.json()["signedURL"] as? String, "\(reply.status) \(reply.text)")
    }

    static func get(_ server: any ServerUnderTest, signed: String) async throws -> HTTPClient.Reply {
        try await server.send("GET", "/storage/v1" + signed)
    }

    @Test("a member removed while uploading stores nothing; signed URLs it made stop working", arguments: TestEngine.available)
    func removedMember(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let shared = try await Shared.make(server)
            let path = "files/\(shared.space)/doc.txt"
            #expect(try await Self.upload(shared.owner, path, "the owner's").status == 200)
            let signed = try await Self.signedURL(shared.member, path)
            #expect(try await Self.get(server, signed: signed).text == "the owner's")

            // The member's replacement is under way (its head sent, half its body) when the owner removes it.
            let upload = try RawConnection(port: server.port)
            defer { upload.close() }
            upload.send(
                "POST /storage/v1/object/\(path) HTTP/1.1\r\nHost: 127.0.0.1\r\napikey: \(shared.member.auth.anonKey)\r\n"
                    + "Authorization: Bearer \(shared.member.session.accessToken)\r\nx-upsert: true\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 12\r\n\r\nthe m"
            )
            try await Task.sleep(for: .milliseconds(300))
            try await shared.removeMember()
            upload.send("ember's")
            let reply = await upload.receive(within: .seconds(20))
            #expect(reply.hasPrefix("HTTP/1.1 404"), "\(reply.prefix(300))")

            let kept = try await shared.owner.request("GET", "/storage/v1/object/\(path)")
            #expect(kept.text == "the owner's", "the owner's object is unchanged")
            let afterRemoval = try await Self.get(server, signed: signed)
            #expect(afterRemoval.status == 400 && afterRemoval.text.contains("InvalidSignature"), "\(afterRemoval.status) \(afterRemoval.text)")
        }
    }

    @Test("a signed URL follows the content: a re-upload with other bytes ends it, the same bytes keep it", arguments: TestEngine.available)
    func signedURLFollowsContent(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let path = "files/\(owner.userID.uuidString.lowercased())/a.txt"
            #expect(try await Self.upload(owner, path, "first").status == 200)
            let signed = try await Self.signedURL(owner, path)
            #expect(try await Self.upload(owner, path, "first", upsert: true).status == 200)
            #expect(try await Self.get(server, signed: signed).text == "first", "the same bytes: the URL still serves")
            #expect(try await Self.upload(owner, path, "second", upsert: true).status == 200)
            #expect(try await Self.get(server, signed: signed).status == 400, "other bytes: the URL no longer serves")
        }
    }

    @Test("user content never runs in a browser: HTML is an attachment, every download says nosniff and a sandboxing CSP; media types parse strictly",
          arguments: TestEngine.available)
    func inertContent(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let user = owner.userID.uuidString.lowercased()
            #expect(try await Self.upload(owner, "files/\(user)/page.html", "<script>alert(1)</script>", type: "text/html").status == 200)
            let page = try await owner.request("GET", "/storage/v1/object/files/\(user)/page.html")
            #expect(page.header("Content-Disposition")?.hasPrefix("attachment") == true, "\(page.headers)")
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Content-Security-Policy")?.contains("sandbox") == true)

            #expect(try await Self.upload(owner, "audio/\(user)/a.mp3", "ID3", type: "audio/mpeg").status == 200)
            let audio = try await owner.request("GET", "/storage/v1/object/audio/\(user)/a.mp3")
            #expect(audio.header("Content-Disposition") == nil, "audio plays inline")
            #expect(audio.header("X-Content-Type-Options") == "nosniff")

            for type in ["audio/../text/html", "audio/mpeg\ttext/html", "audio/mpeg text/html", "audio", "audio/mpeg; x"] {
                let refused = try await Self.upload(owner, "audio/\(user)/b.mp3", "x", type: type)
                #expect(refused.status == 415, "\(type): \(refused.status) \(refused.text)")
            }
            #expect(try await Self.upload(owner, "audio/\(user)/c.mp3", "x", type: "audio/mpeg; charset=\"x\"").status == 200)
        }
    }

    @Test("object names with DEL, separators or invisible characters are refused; a space id in capitals names the same object",
          arguments: TestEngine.available)
    func names(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let user = owner.userID.uuidString.lowercased()
            for name in ["a%7Fb", "a%E2%80%A8b", "a%E2%80%A9b", "%EF%BB%BFa", "a%C2%85b", "a%E2%80%8Bb"] {
                let refused = try await owner.request("POST", "/storage/v1/object/files/\(user)/\(name)", headers: ["Content-Type": "text/plain"], body: Data("x".utf8))
                #expect(refused.status == 400 && refused.text.contains("InvalidKey"), "\(name): \(refused.status) \(refused.text)")
            }
            #expect(try await Self.upload(owner, "files/\(user)/emoji-👨‍👩‍👧.txt", "family").status == 200, "joiners in emoji stay")

            let upper = owner.userID.uuidString.uppercased()
            #expect(try await Self.upload(owner, "files/\(upper)/Up.txt", "up").status == 200)
            #expect(try await owner.request("GET", "/storage/v1/object/files/\(user)/Up.txt").text == "up")
            let listed = try await owner.request(
                "POST", "/storage/v1/object/list/files", headers: ["Content-Type": "application/json"], body: Data(#"{"prefix":"\#(user)"}"#.utf8)
            )
            let names = (try JSONSerialization.jsonObject(with: listed.body) as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
            #expect(names.contains("Up.txt"), "\(names)")
        }
    }

    @Test("concurrent completions of one upload answer 204 once and 409 otherwise, never 500", arguments: TestEngine.available)
    func concurrentCompletion(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let bytes = Data((0..<(300 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let path = "/sync/v1/spaces/\(owner.userID.uuidString.lowercased())/blobs/\(TestFiles.sha256(bytes))"
            let blobStatuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await owner.patch(path, bytes, offset: 0, length: bytes.count).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(blobStatuses.allSatisfy { $0 == 204 || $0 == 409 } && blobStatuses.contains(204), "\(blobStatuses)")

            let user = owner.userID.uuidString.lowercased()
            let created = try await Self.createTUS(owner, name: "\(user)/tus.txt", length: bytes.count)
            let location = try #require(created.header("Location"))
            let tusStatuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await owner.request("PATCH", location, headers: [
                            "Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream",
                        ], body: bytes).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(tusStatuses.allSatisfy { $0 == 204 || $0 == 409 || $0 == 404 } && tusStatuses.contains(204), "\(tusStatuses)")
            #expect(try await owner.request("GET", "/storage/v1/object/files/\(user)/tus.txt").body == bytes)
        }
    }

    static func createTUS(_ device: SyncDevice, name: String, length: Int, bucket: String = "files") async throws -> HTTPClient.Reply {
        let metadata = ["bucketName": bucket, "objectName": name, "contentType": "text/plain"]
            .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
        return try await device.request("POST", "/storage/v1/upload/resumable", headers: [
            "Tus-Resumable": "1.0.0", "Upload-Length": "\(length)", "Upload-Metadata": metadata,
        ])
    }

    @Test("quotas: open uploads and the bytes they declare, and the bytes an account stores", arguments: TestEngine.available)
    func quotas(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.blobs.maximumOpenUploadsPerAccount = 2
            configuration.blobs.maximumOpenUploadBytesPerAccount = 1 << 20
            configuration.blobs.maximumStoredBytesPerAccount = 10_000
        }) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let user = owner.userID.uuidString.lowercased()
            let large = try await Self.createTUS(owner, name: "\(user)/huge", length: 2 << 20)
            #expect(large.status == 413 && large.text.contains("quota_exceeded"), "\(large.status) \(large.text)")
            #expect(try await Self.createTUS(owner, name: "\(user)/1", length: 1000).status == 201)
            #expect(try await Self.createTUS(owner, name: "\(user)/2", length: 1000).status == 201)
            let third = try await Self.createTUS(owner, name: "\(user)/3", length: 1000)
            #expect(third.status == 413 && third.text.contains("quota_exceeded"), "\(third.status) \(third.text)")

            #expect(try await Self.upload(owner, "files/\(user)/a", String(repeating: "a", count: 6000)).status == 200)
            let over = try await Self.upload(owner, "files/\(user)/b", String(repeating: "b", count: 6000))
            #expect(over.status == 413 && over.text.contains("quota_exceeded"), "\(over.status) \(over.text)")
            #expect(try await owner.request("GET", "/storage/v1/object/files/\(user)/b").status == 404, "nothing was stored")
        }
    }

    @Test("sync blob uploads under way are capped per space; continuing one is never refused", arguments: TestEngine.available)
    func openBlobUploadsPerSpace(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.blobs.maximumOpenUploadsPerSpace = 2
        }) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let space = owner.userID.uuidString.lowercased()
            var files: [Data] = []
            for index in 0..<3 {
                let file = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &+ index) })
                files.append(file)
                let reply = try await owner.patch("/sync/v1/spaces/\(space)/blobs/\(TestFiles.sha256(file))", file.prefix(100), offset: 0, length: file.count)
                if index < 2 {
                    #expect(reply.status == 204, "\(reply.status) \(reply.text)")
                } else {
                    #expect(reply.status == 413 && reply.text.contains("quota_exceeded"), "\(reply.status) \(reply.text)")
                }
            }
            let rest = try await owner.patch("/sync/v1/spaces/\(space)/blobs/\(TestFiles.sha256(files[0]))", files[0].dropFirst(100), offset: 100, length: 1000)
            #expect(rest.status == 204, "an upload under way goes on: \(rest.status) \(rest.text)")
        }
    }

    @Test("a TUS Location is a path, never built from the Host header, or starts with --public-url", arguments: [nil, "https://sync.example.com/"])
    func tusLocation(_ publicURL: String?) async throws {
        try await LiveServer.with(.sqlite, schema: Self.schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.publicURL = publicURL
        }) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let metadata = "bucketName \(Data("files".utf8).base64EncodedString()),objectName \(Data("\(owner.userID.uuidString.lowercased())/x".utf8).base64EncodedString())"
            let connection = try RawConnection(port: server.port)
            defer { connection.close() }
            connection.send(
                "POST /storage/v1/upload/resumable HTTP/1.1\r\nHost: evil.example\r\napikey: \(owner.auth.anonKey)\r\n"
                    + "Authorization: Bearer \(owner.session.accessToken)\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 10\r\n"
                    + "Upload-Metadata: \(metadata)\r\nContent-Length: 0\r\n\r\n"
            )
            let reply = await connection.receive(within: .seconds(20))
            let location = reply.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }.map { String($0.dropFirst("location:".count)).trimmingCharacters(in: .whitespaces) }
            #expect(reply.hasPrefix("HTTP/1.1 201"), "\(reply.prefix(200))")
            #expect(location?.hasPrefix(publicURL.map { $0 + "storage/v1/upload/resumable/" } ?? "/storage/v1/upload/resumable/") == true, "\(location ?? "none")")
            #expect(!reply.contains("evil.example"))
        }
    }

    @Test("a member removed from the space can no longer see or continue its TUS upload", arguments: TestEngine.available)
    func removedMemberTUS(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let shared = try await Shared.make(server)
            let created = try await Self.createTUS(shared.member, name: "\(shared.space)/upload.txt", length: 10)
            let location = try #require(created.header("Location"))
            #expect(try await shared.member.request("HEAD", location, headers: ["Tus-Resumable": "1.0.0"]).status == 200)
            try await shared.removeMember()
            #expect(try await shared.member.request("HEAD", location, headers: ["Tus-Resumable": "1.0.0"]).status == 404)
            let patch = try await shared.member.request("PATCH", location, headers: [
                "Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream",
            ], body: Data("0123456789".utf8))
            #expect(patch.status == 404)
        }
    }

    @Test("an upload the client abandons midway is a client error (400 request_aborted), not a server failure")
    func abortedUpload() async throws {
        try await LiveServer.with(.sqlite, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let connection = try RawConnection(port: server.port)
            connection.send(
                "POST /storage/v1/object/files/\(owner.userID.uuidString.lowercased())/cut.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "apikey: \(owner.auth.anonKey)\r\nAuthorization: Bearer \(owner.session.accessToken)\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 100000\r\n\r\nonly a few bytes"
            )
            try await Task.sleep(for: .milliseconds(300))
            connection.close()
            var metrics = ""
            for _ in 0..<100 {
                metrics = try await server.send("GET", "/metrics").text
                if Self.counted(metrics, status: 400) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(Self.counted(metrics, status: 400), "the aborted upload is counted as a 400")
            #expect(!Self.counted(metrics, status: 500), "an abort is never a server error")
        }
    }

    /// Whether `/metrics` counts a request to Storage's upload route with `status`.
    static func counted(_ metrics: String, status: Int) -> Bool {
        metrics.split(separator: "\n").contains { line in
            line.hasPrefix("ferry_http_requests_total") && line.contains("/storage/v1/object/") && line.contains(#"status="\#(status)""#)
        }
    }
}
