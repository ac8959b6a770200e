import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/sync/v1/spaces/{space}/blobs/{sha256}` and the push's blob check on a live server, on both engines.
@Suite("Blobs: upload, download, push check, collection")
struct BlobRoutesTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("an upload sent in two halves with a HEAD between is stored, read whole and by range, and a record may then name it", arguments: TestEngine.available)
    func resumableUpload(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            let tablet = try await phone.sibling()
            let bytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
            let hash = Self.hash(bytes)
            let path = Self.path(phone.userID, hash)

            let missing = try await phone.push([phone.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z", "audio": Self.reference(hash, bytes.count)])])
            #expect(missing.results.first?.status == .rejected && missing.results.first?.code == "blob_missing", "a record never names a blob the server lacks")

            let first = try await phone.patch(path, bytes.prefix(1_234_567), offset: 0, length: bytes.count)
            #expect(first.status == 204 && first.header("Upload-Offset") == "1234567")
            let head = try await phone.request("HEAD", path)
            #expect(head.status == 404 && head.header("Upload-Offset") == "1234567" && head.header("Upload-Length") == "\(bytes.count)")
            let wrongOffset = try await phone.patch(path, bytes.suffix(from: 1000), offset: 1000, length: bytes.count)
            #expect(wrongOffset.status == 409 && wrongOffset.header("Upload-Offset") == "1234567")
            // A body declared longer than the upload has left is refused before it is read: the upload stays as it was.
            let overlong = try await phone.patch(path, bytes.suffix(from: 1_234_567) + Data([1, 2, 3]), offset: 1_234_567, length: bytes.count)
            #expect(overlong.status == 413 && overlong.errorCode == "payload_too_large")
            #expect(try await phone.request("HEAD", path).header("Upload-Offset") == "1234567", "nothing discarded")
            let rest = try await phone.patch(path, bytes.suffix(from: 1_234_567), offset: 1_234_567, length: bytes.count)
            #expect(rest.status == 204 && rest.header("Upload-Offset") == "\(bytes.count)")

            #expect(try await tablet.request("HEAD", path).status == 200)
            let whole = try await tablet.request("GET", path)
            #expect(whole.status == 200 && whole.body == bytes)
            let tail = try await tablet.request("GET", path, headers: ["Range": "bytes=2000000-"])
            #expect(tail.status == 206 && tail.body == bytes.suffix(from: 2_000_000))
            let middle = try await tablet.request("GET", path, headers: ["Range": "bytes=10-19"])
            #expect(middle.status == 206 && middle.body == bytes[10..<20] && middle.header("Content-Range") == "bytes 10-19/\(bytes.count)")

            let named = try await phone.push([phone.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z", "audio": Self.reference(hash, bytes.count)])])
            #expect(named.results.first?.status == .applied)
            let wrongSize = try await phone.push([phone.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z", "audio": Self.reference(hash, 5)])])
            #expect(wrongSize.results.first?.code == "blob_missing")
        }
    }

    @Test("bytes that do not hash to their address are discarded; outsiders, viewers and malformed requests are refused", arguments: TestEngine.available)
    func refusals(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.blobs.maximumBlobBytes = 1 << 20
        }) { server in
            let owner = try await SyncDevice.signUp(server)
            let stranger = try await SyncDevice.signUp(server, "stranger")
            let viewer = try await SyncDevice.signUp(server, "viewer")
            let space = try await owner.createSpace("Choir")
            try await owner.share(space.id, with: viewer, as: .viewer)
            let bytes = Data("the sermon".utf8)
            let path = Self.path(space.id, Self.hash(bytes))

            let lying = try await owner.patch(path, Data("not the sermon".utf8), offset: 0, length: 14)
            #expect(try lying.status == 422 && (lying.json()["error_code"] as? String) == "blob_hash_mismatch")
            #expect(try await owner.request("HEAD", path).header("Upload-Offset") == "0", "the bad bytes were discarded")

            #expect(try await viewer.patch(path, bytes, offset: 0, length: bytes.count).status == 403)
            let outsider = try await stranger.patch(path, bytes, offset: 0, length: bytes.count)
            #expect(try outsider.status == 404 && (outsider.json()["error_code"] as? String) == "blob_not_found")
            #expect(try await owner.patch(path, bytes, offset: 0, length: 2 << 20).status == 413)
            #expect(try await owner.patch(path, bytes + bytes, offset: 0, length: bytes.count).status == 413)
            #expect(try await owner.request("PATCH", path, headers: ["Upload-Length": "10"]).status == 400)
            #expect(try await owner.request("GET", Self.path(space.id, "ABC")).status == 400)

            #expect(try await owner.patch(path, bytes, offset: 0, length: bytes.count).status == 204)
            #expect(try await viewer.request("GET", path).body == bytes, "viewers read")
            #expect(try await stranger.request("GET", path).status == 404)
            #expect(try await stranger.request("HEAD", path).status == 404)
            #expect(try await owner.request("GET", path, headers: ["Range": "bytes=99-"]).status == 416)
            #expect(try await owner.request("GET", path, headers: ["Range": "bytes=\(bytes.count)-"]).status == 416, "a range must start within the blob")
            let huge = try await owner.request("GET", path, headers: ["Range": "bytes=0-9223372036854775807"])
            #expect(huge.status == 206 && huge.body == bytes, "an end past the blob (even Int64.max) is cut to the blob")
            #expect(try await owner.request("GET", path, headers: ["Range": "bytes=5-2"]).status == 416)
        }
    }

    @Test("a blob no live record names is collected after the retention; a named one stays", arguments: TestEngine.available)
    func collection(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            let kept = Data("kept".utf8)
            let orphan = Data("orphan".utf8)
            for bytes in [kept, orphan] {
                #expect(try await phone.patch(Self.path(phone.userID, Self.hash(bytes)), bytes, offset: 0, length: bytes.count).status == 204)
            }
            let sermon = UUID()
            _ = try await phone.push([phone.upsert("sermons", sermon, ["title": "Kept", "date": "2026-11-21T10:00:00Z", "audio": Self.reference(Self.hash(kept), kept.count)])])
            #expect(await server.server.collectBlobs() == 0, "nothing is older than the retention yet")
            #expect(await server.server.collectBlobs(now: Date().addingTimeInterval(8 * 86_400)) == 1)
            #expect(try await phone.request("HEAD", Self.path(phone.userID, Self.hash(kept))).status == 200)
            #expect(try await phone.request("HEAD", Self.path(phone.userID, Self.hash(orphan))).status == 404)

            _ = try await phone.push([phone.delete("sermons", sermon)])
            #expect(await server.server.collectBlobs(now: Date().addingTimeInterval(8 * 86_400)) == 1, "a deleted record names nothing")
        }
    }

    static func hash(_ data: Data) -> String { TestFiles.sha256(data) }

    static func path(_ space: UUID, _ hash: String) -> String {
        "/sync/v1/spaces/\(space.uuidString.lowercased())/blobs/\(hash)"
    }

    static func reference(_ hash: String, _ size: Int) -> JSONValue {
        ["sha256": .string(hash), "size": .number(Double(size)), "content_type": "audio/mp4"]
    }
}

extension SyncDevice {
    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) async throws -> HTTPClient.Reply {
        var all = ["apikey": auth.anonKey, "Authorization": "Bearer \(session.accessToken)"]
        all.merge(headers) { _, new in new }
        return try await auth.server.send(method, path, headers: all, body: body)
    }

    func patch(_ path: String, _ bytes: Data, offset: Int, length: Int) async throws -> HTTPClient.Reply {
        try await request("PATCH", path, headers: [
            "Upload-Offset": "\(offset)", "Upload-Length": "\(length)", "Content-Type": "application/offset+octet-stream",
        ], body: bytes)
    }
}
