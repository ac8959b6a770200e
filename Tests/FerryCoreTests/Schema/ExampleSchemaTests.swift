import FerryCore
import Foundation
import Testing

/// The schemas in `Examples/` model the seed apps; these tests pin the fields each seed depends on.
@Suite("Example schemas")
struct ExampleSchemaTests {
    static let examples = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Examples")

    static func load(_ name: String) throws -> Schema {
        try SchemaParser.load(files: [examples.appending(path: name).path()])
    }

    @Test("every example parses", arguments: ["tabletnotes.yaml", "ops.yaml", "unbound.yaml", "lingo.yaml"])
    func parses(_ name: String) throws {
        _ = try Self.load(name)
    }

    @Test("tabletnotes: a sermon aggregate with notes, transcript segments, summary and audio (the sermon app)")
    func tabletNotes() throws {
        let schema = try Self.load("tabletnotes.yaml")
        #expect(schema.collection(named: "sermons")?.fields.contains { $0.type == .blob } == true)
        #expect(schema.collection(named: "transcripts")?.field(named: "segments")?.type == .json)
        for child in ["notes", "transcripts", "summaries"] {
            #expect(schema.collection(named: child)?.parent?.collection == "sermons")
        }
    }

    @Test("ops: the field-service collections (the field-service app)")
    func ops() throws {
        let names = Set(try Self.load("ops.yaml").collections.map(\.name))
        #expect(names.isSuperset(of: ["companies", "users", "clients", "task_types", "projects", "tasks", "calendar_events"]))
    }

    @Test("unbound: repositories, sessions and encrypted messages (the coding-agent companion)")
    func unbound() throws {
        let schema = try Self.load("unbound.yaml")
        #expect(schema.collection(named: "repositories") != nil)
        #expect(schema.collection(named: "agent_coding_sessions") != nil)
        #expect(schema.collection(named: "messages")?.isEncrypted == true)
    }

    @Test("lingo: a profile that needs a first name and languages (the language-learning app)")
    func lingo() throws {
        let schema = try Self.load("lingo.yaml")
        #expect(Set(schema.requiredProfileFields) == ["first_name", "native_language", "learning_languages"])
        #expect(schema.collection(named: "profiles")?.field(named: "learning_languages")?.type == .json)
    }
}
