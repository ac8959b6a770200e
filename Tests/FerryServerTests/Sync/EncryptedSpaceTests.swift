import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Records of end-to-end encrypted spaces in push and pull: ciphertext only, stored in `_sealed`, on both engines.
@Suite("Sync: encrypted spaces")
struct EncryptedSpaceTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    /// A trusted device, an encrypted space, and its first key stored.
    static func vault(_ server: any ServerUnderTest) async throws -> (device: KeyedDevice, space: UUID, key: SpaceKey) {
        let device = try await KeyedDevice.signUp(server)
        try await device.registered()
        let space = try await device.createEncryptedSpace()
        let key = try SpaceKey.generate(version: 1)
        _ = try await device.stored([try device.seal(key, space: space, to: device)])
        return (device, space, key)
    }

    /// `value` encrypted for `field` of a record, as a field value on the wire.
    static func sealed(_ value: JSONValue, _ key: SpaceKey, space: UUID, collection: String, id: UUID, field: String) throws -> JSONValue {
        let encrypted = try FieldCipher.encryptedValue(Data(value.jsonText.utf8), spaceID: space, collection: collection, recordID: id, field: field, key: key)
        return .object(["keyVersion": .number(Double(encrypted.keyVersion)), "ciphertext": .string(encrypted.ciphertext)])
    }

    /// A sermon's required fields, encrypted.
    static func sermon(_ id: UUID, _ key: SpaceKey, space: UUID) throws -> [String: JSONValue] {
        [
            "title": try sealed("Grace", key, space: space, collection: "sermons", id: id, field: "title"),
            "date": try sealed("2026-11-21T10:00:00Z", key, space: space, collection: "sermons", id: id, field: "date"),
        ]
    }

    @Test("ciphertext round-trips through push and pull, stored in _sealed; the parent link stays in clear", arguments: TestEngine.available)
    func roundTrip(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server, database in
            var (device, space, key) = try await Self.vault(server)
            let sermon = UUID(), note = UUID()
            let sermonFields = try Self.sermon(sermon, key, space: space)
            let noteFields: [String: JSONValue] = [
                "sermon_id": .string(sermon.uuidString.lowercased()),
                "text": try Self.sealed("first point", key, space: space, collection: "notes", id: note, field: "text"),
            ]
            let pushed = try await device.sync.push([
                device.sync.upsert("sermons", sermon, space: space, sermonFields),
                device.sync.upsert("notes", note, space: space, noteFields),
            ])
            #expect(pushed.results.map(\.status) == [.applied, .applied])

            var reader = try await device.sync.sibling()
            let rows = latestRows(try await reader.pullAll().changes.filter { $0.space == space })
            #expect(rows[sermon]?.fields == sermonFields)
            #expect(rows[note]?.fields == noteFields)
            let opened = try FieldCipher.decrypt(
                try JSONDecoder().decode(EncryptedFieldValue.self, from: Data(try #require(rows[note]?.fields["text"]).jsonText.utf8)),
                spaceID: space, collection: "notes", recordID: note, field: "text", key: key
            )
            #expect(String(decoding: opened, as: UTF8.self) == "\"first point\"")

            #expect(try await database.integer("SELECT count(*) FROM sermons WHERE title IS NULL AND _sealed IS NOT NULL") == 1)
            #expect(try await database.integer("SELECT count(*) FROM notes WHERE sermon_id IS NOT NULL AND text IS NULL") == 1)
        }
    }

    @Test("a clear value, a missing key and a future key version are refused per mutation", arguments: TestEngine.available)
    func refusals(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var (device, space, key) = try await Self.vault(server)
            let keyless = try await device.createEncryptedSpace("No key yet")
            let id = UUID()
            let fields = try Self.sermon(id, key, space: space)
            let (title, date) = (fields["title"]!, fields["date"]!)
            let future = try Self.sealed("Grace", try SpaceKey.generate(version: 2), space: space, collection: "sermons", id: id, field: "title")
            let reply = try await device.sync.push([
                device.sync.upsert("sermons", id, space: space, ["title": "Grace", "date": date]),
                device.sync.upsert("sermons", id, space: space, ["title": .null, "date": date]),
                device.sync.upsert("sermons", id, space: space, ["title": .object(["keyVersion": 1, "ciphertext": "short"]), "date": date]),
                device.sync.upsert("sermons", id, space: keyless, ["title": title, "date": date]),
                device.sync.upsert("sermons", id, space: space, ["title": future, "date": date]),
                device.sync.upsert("sermons", id, space: space, ["title": title, "date": date]),
                device.sync.upsert("sermons", ["title": "in clear", "date": "2026-11-21T10:00:00Z"]),
            ])
            #expect(reply.results.map(\.code) == [
                "encryption_required", "encryption_required", "encryption_required", "space_key_missing", "key_version_conflict", nil, nil,
            ])
            #expect(reply.results.allSatisfy { $0.status == .applied || ($0.message ?? "").count > 20 })
        }
    }

    @Test("a record of an encrypted collection is refused in a plain space, per mutation", arguments: TestEngine.available)
    func encryptedCollectionInPlainSpace(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try ExampleSchemas.text("unbound.yaml"), configure: AuthHarness.fastHashing) { server in
            var device = try await KeyedDevice.signUp(server)
            try await device.registered()
            let repository = UUID(), session = UUID()
            let reply = try await device.sync.push([
                device.sync.upsert("repositories", repository, ["name": "ferry"]),
                device.sync.upsert("agent_coding_sessions", session, ["repository_id": .string(repository.uuidString.lowercased())]),
                device.sync.upsert("messages", ["session_id": .string(session.uuidString.lowercased()), "content": "in clear"]),
            ])
            #expect(reply.results.map(\.code) == [nil, nil, "space_not_encrypted"])
            #expect(reply.results[2].message?.contains("encrypted space") == true)
        }
    }

    @Test("a pull reports every encrypted space's key version and leaves out the spaces it is asked to", arguments: TestEngine.available)
    func keyVersionsAndExclusion(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var (device, space, key) = try await Self.vault(server)
            let keyless = try await device.createEncryptedSpace("No key yet")
            let id = UUID()
            _ = try await device.sync.push([device.sync.upsert("sermons", id, space: space, try Self.sermon(id, key, space: space))])
            let all = try await device.sync.pull(PullRequest())
            #expect(all.keyVersions == [space: 1, keyless: 0], "encrypted spaces only")
            #expect(all.changes.map(\.id) == [id])
            let excluded = try await device.sync.pull(PullRequest(exclude: [space]))
            #expect(excluded.changes.isEmpty && excluded.cursors[space] == nil && excluded.keyVersions[space] == 1)
            #expect(excluded.cursors[device.sync.userID] != nil, "other spaces are pulled as usual")
        }
    }

    @Test("deleting a parent in an encrypted space tombstones its children, whose ciphertext stays", arguments: TestEngine.available)
    func cascade(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var (device, space, key) = try await Self.vault(server)
            let sermon = UUID(), note = UUID()
            let noteText = try Self.sealed("point", key, space: space, collection: "notes", id: note, field: "text")
            _ = try await device.sync.push([
                device.sync.upsert("sermons", sermon, space: space, try Self.sermon(sermon, key, space: space)),
                device.sync.upsert("notes", note, space: space, ["sermon_id": .string(sermon.uuidString.lowercased()), "text": noteText]),
            ])
            let deleted = try await device.sync.push([device.sync.delete("sermons", sermon, space: space)])
            #expect(deleted.results.map(\.status) == [.applied])
            var reader = try await device.sync.sibling()
            let rows = latestRows(try await reader.pullAll().changes.filter { $0.space == space })
            #expect(rows[sermon]?.deleted == true)
            #expect(rows[note]?.deleted == true, "the child was deleted with its parent")
            #expect(rows[note]?.fields["text"] == noteText)
        }
    }
}
