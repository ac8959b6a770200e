import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Testing

/// A collection the schema marks `encrypted` lives only in encrypted spaces; the store says so at write time.
@Suite("LocalStore: encrypted collections")
struct EncryptedCollectionTests {
    @Test("a message (an encrypted collection) is refused in a space known to be plain, and allowed where encryption is not yet known")
    func plainSpaceRefused() throws {
        let schema = try SchemaParser.load(files: [ExampleSchemas.path("unbound.yaml")])
        let space = UUID()
        let store = try LocalStore.inMemory(schema: schema, defaultSpace: space)
        let repository = try store.save(collection: "repositories", fields: ["name": "ferry"])
        let session = try store.save(collection: "agent_coding_sessions", fields: ["repository_id": .string(repository.id.uuidString)])
        let message: [String: JSONValue] = ["session_id": .string(session.id.uuidString), "content": "hello"]
        #expect(try store.save(collection: "messages", fields: message).space == space, "not pulled yet: the server decides")

        try store.apply(PullResponse(changes: [], cursors: [space: 0], hasMore: false))   // a pull names it, with no key version
        let error = try #require(throws: StoreError.self) { try store.save(collection: "messages", fields: message) }
        #expect(error.code == .spaceNotEncrypted)
        #expect(error.message.contains("encrypted space"))
        #expect(try store.fetchAll(collection: "messages").count == 1, "nothing was written")
        #expect(try store.save(collection: "repositories", fields: ["name": "still fine"]).space == space)
    }
}
