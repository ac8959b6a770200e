import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/storage/v1` beyond what storage3 drives: public buckets, raw bodies, bucket declarations, listing the root.
@Suite("Storage: public buckets and listings")
struct StorageRoutesTests {
    static let schema = """
        version: 1
        collections:
          notes:
            fields:
              text: text
        buckets:
          covers: { public: true, allowed_mime_types: ["image/*"] }
          private-audio: {}
          small: { file_size_limit: 1000 }
        """

    @Test("a raw upload declared past the bucket's limit is 413 at once, before its body is sent")
    func declaredTooLarge() async throws {
        try await LiveServer.with(.sqlite, schema: Self.schema, configure: { $0.useFastPasswordHashing() }) { server in
            let owner = try await SyncDevice.signUp(server, "declared")
            let connection = try RawConnection(port: server.port)
            defer { connection.close() }
            let started = ContinuousClock.now
            connection.send(
                "POST /storage/v1/object/small/\(owner.userID.uuidString.lowercased())/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "apikey: \(server.server.keys.anonKey)\r\nAuthorization: Bearer \(owner.session.accessToken)\r\n"
                    + "Content-Type: application/octet-stream\r\nContent-Length: 5000\r\n\r\n"
            )
            let answer = await connection.receive(within: .seconds(10))
            #expect(answer.hasPrefix("HTTP/1.1 413") && answer.contains("payload_too_large"), "\(answer.prefix(300))")
            #expect(ContinuousClock.now - started < .seconds(5), "answered before the body, not after a timeout")
        }
    }

    @Test("a public bucket serves anyone, a private one nobody without a session; the root lists only the caller's spaces", arguments: TestEngine.available)
    func publicAndPrivate(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let other = try await SyncDevice.signUp(server, "other")
            let user = owner.userID.uuidString.lowercased()
            let png = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })

            let raw = try await owner.request("POST", "/storage/v1/object/covers/\(user)/art/cover.png", headers: ["Content-Type": "image/png"], body: png)
            #expect(try raw.status == 200 && (raw.json()["Key"] as? String) == "covers/\(user)/art/cover.png", "a raw body uploads")
            let refused = try await owner.request("POST", "/storage/v1/object/covers/\(user)/notes.txt", headers: ["Content-Type": "text/plain"], body: Data("x".utf8))
            #expect(refused.status == 415)

            let open = try await server.send("GET", "/storage/v1/object/public/covers/\(user)/art/cover.png")
            #expect(open.status == 200 && open.body == png && open.header("Content-Type") == "image/png", "anyone reads a public bucket")
            let ranged = try await server.send("GET", "/storage/v1/object/public/covers/\(user)/art/cover.png", headers: ["Range": "bytes=4990-"])
            #expect(ranged.status == 206 && ranged.body == png.suffix(10))

            _ = try await owner.request("POST", "/storage/v1/object/private-audio/\(user)/a.m4a", headers: ["Content-Type": "audio/mp4"], body: png)
            let closed = try await server.send("GET", "/storage/v1/object/public/private-audio/\(user)/a.m4a")
            #expect(try closed.status == 404 && (closed.json()["statusCode"] as? String) == "404", "a private bucket has no public URLs")
            let anonymous = try await server.send("GET", "/storage/v1/object/private-audio/\(user)/a.m4a")
            #expect(anonymous.status == 401)

            let root = try await owner.request("POST", "/storage/v1/object/list/covers", headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
            let names = (try JSONSerialization.jsonObject(with: root.body) as? [[String: Any]])?.map { $0["name"] as? String }
            #expect(names == [user], "the root lists the caller's spaces that hold objects")
            let strangers = try await other.request("POST", "/storage/v1/object/list/covers", headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
            #expect((try JSONSerialization.jsonObject(with: strangers.body) as? [Any])?.isEmpty == true, "another account sees none of them")

            #expect(try await owner.request("POST", "/storage/v1/bucket", headers: ["Content-Type": "application/json"], body: Data("{\"name\":\"x\"}".utf8)).status == 403)
            #expect(try await owner.request("GET", "/storage/v1/bucket/nope").status == 404)
            let noBoundary = try await owner.request("POST", "/storage/v1/object/covers/\(user)/b.png", headers: ["Content-Type": "multipart/form-data"], body: png)
            #expect(try noBoundary.status == 400 && (noBoundary.json()["message"] as? String)?.contains("boundary") == true, "not 415: the type is fine, its boundary is missing")
        }
    }
}
