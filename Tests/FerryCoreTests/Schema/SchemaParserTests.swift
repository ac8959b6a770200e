import FerryCore
import Foundation
import Testing

@Suite("Schema parser")
struct SchemaParserTests {
    @Test("reads fields, shorthand types, parents, unique keys and the profile")
    func readsACompleteSchema() throws {
        let schema = try SchemaParser.parse("""
            collections:
              notes:
                parent: { collection: sermons, field: sermon_id }
                fields:
                  body: { type: text, required: true }
              sermons:
                fields:
                  title: text
                  recorded_at: timestamp
                  audio: blob
                unique: [[title, recorded_at]]
            profile:
              fields:
                first_name: text
                languages: json
              required: [first_name]
            """)
        #expect(schema.collections.map(\.name) == ["profiles", "sermons", "notes"], "parents come before children")
        let sermons = try #require(schema.collection(named: "sermons"))
        #expect(sermons.fields.map(\.type) == [.text, .timestamp, .blob])
        #expect(sermons.fields.allSatisfy { !$0.isRequired })
        #expect(sermons.uniqueKeys == [["title", "recorded_at"]])
        let notes = try #require(schema.collection(named: "notes"))
        #expect(notes.fields.first == FieldDefinition(name: "sermon_id", type: .uuid, isRequired: true), "the parent field is added")
        #expect(notes.field(named: "body")?.isRequired == true)
        let profiles = try #require(schema.collection(named: "profiles"))
        #expect(profiles.isSystem)
        #expect(profiles.fields.map(\.name) == ["first_name", "languages"])
        #expect(schema.requiredProfileFields == ["first_name"])
    }

    @Test("accepts JSON as well as YAML")
    func acceptsJSON() throws {
        let schema = try SchemaParser.parse(#"{"collections": {"tasks": {"fields": {"title": "text", "done": {"type": "bool"}}, "unique": ["title"]}}}"#)
        #expect(schema.collection(named: "tasks")?.fields.map(\.type) == [.text, .bool])
        #expect(schema.collection(named: "tasks")?.uniqueKeys == [["title"]])
    }

    @Test("an empty profile still yields the profiles system collection")
    func systemCollectionsAlwaysExist() throws {
        let schema = try SchemaParser.parse("collections: {}")
        #expect(schema == Schema.empty)
        #expect(try SchemaParser.load(files: []) == Schema.empty)
    }

    struct BadSchema: Sendable, CustomTestStringConvertible {
        var text: String
        var path: String
        var message: String
        var line: Int?
        var testDescription: String { message }
    }

    static let badSchemas: [BadSchema] = [
        .init(text: "collections: [", path: "", message: "not valid YAML or JSON", line: 2),
        .init(text: "", path: "", message: "the file is empty"),
        .init(text: "collection: {}", path: "collection", message: "unknown key 'collection'", line: 1),
        .init(text: "collections:\n  notes:\n    fields:\n      body: strng\n", path: "collections.notes.fields.body", message: "unknown type 'strng'", line: 4),
        .init(text: "collections:\n  Notes:\n    fields: {}\n", path: "collections.Notes", message: "must start with a lowercase letter", line: 3),
        .init(text: "collections:\n  notes:\n    fields:\n      id: uuid\n", path: "collections.notes.fields.id", message: "'id' is reserved", line: 4),
        .init(text: "collections:\n  notes:\n    fields:\n      _seq: integer\n", path: "collections.notes.fields._seq", message: "must start with a lowercase letter", line: 4),
        .init(text: "collections:\n  notes: {}\n", path: "collections.notes", message: "needs a 'fields' mapping", line: 2),
        .init(text: "collections:\n  notes:\n    feilds: {}\n", path: "collections.notes.feilds", message: "unknown key 'feilds'", line: 3),
        .init(text: "collections:\n  profiles:\n    fields: {}\n", path: "collections.profiles", message: "is a system collection", line: 3),
        .init(text: "collections:\n  ferry_x:\n    fields: {}\n", path: "collections.ferry_x", message: "reserved for the server", line: 3),
        .init(text: "collections:\n  notes:\n    fields: {a: text}\n    unique: [b]\n", path: "collections.notes.unique", message: "'b' is not a field", line: 4),
        .init(text: "collections:\n  notes:\n    encrypted: yes please\n    fields: {a: text}\n", path: "collections.notes.encrypted", message: "expected true or false", line: 3),
        .init(text: "collections:\n  notes:\n    encrypted: true\n    fields: {a: text}\n    unique: [a]\n", path: "collections.notes.unique", message: "cannot have unique keys", line: 5),
        .init(text: "collections:\n  notes:\n    parent: {collection: sermons, field: sermon_id}\n    fields: {}\n", path: "collections.notes.parent.collection", message: "unknown parent collection 'sermons'", line: 3),
        .init(text: "collections:\n  notes:\n    parent: {collection: sermons}\n    fields: {}\n", path: "collections.notes.parent", message: "needs both 'collection' and 'field'", line: 3),
        .init(text: "collections:\n  a:\n    parent: {collection: a, field: a_id}\n    fields: {}\n", path: "collections.a.parent", message: "cycle", line: 3),
        .init(text: "collections:\n  notes:\n    parent: {collection: s, field: s_id}\n    fields: {s_id: text}\n  s:\n    fields: {}\n", path: "collections.notes.fields.s_id", message: "must have type uuid", line: 3),
        .init(text: "collections:\n  notes:\n    fields: {a: {required: true}}\n", path: "collections.notes.fields.a", message: "needs a 'type'", line: 3),
        .init(text: "collections:\n  notes:\n    fields: {a: text, a: integer}\n", path: "", message: "'a' appears twice", line: 3),
        .init(text: "profile:\n  fields: {name: text}\n  required: [age]\n", path: "profile.required", message: "'age' is not a profile field", line: 3),
        .init(text: "version: 2\n", path: "version", message: "only schema version 1", line: 1),
        .init(text: "collections:\n  a:\n    parent: {collection: b, field: id}\n    fields: {}\n  b:\n    fields: {}\n", path: "collections.a.parent.field", message: "'id' is reserved", line: 3),
        .init(text: "collections:\n  a:\n    fields: {x: text, y: text}\n    unique: [[x, y], [y, x]]\n", path: "collections.a.unique[1]", message: "the same key twice", line: 4),
        .init(text: "collections:\n  a:\n    fields: {x: text}\n    unique: [[x, x]]\n", path: "collections.a.unique[0]", message: "'x' twice", line: 4),
        .init(text: "collections:\n  a:\n    fields: {x: text}\n    unique: [\(Array(repeating: "x", count: 33).joined(separator: ","))]\n", path: "collections.a.unique", message: "at most 32 unique keys", line: 4),
        .init(text: "collections:\n  a:\n    fields: {\((0..<17).map { "f\($0): text" }.joined(separator: ","))}\n    unique: [[\((0..<17).map { "f\($0)" }.joined(separator: ","))]]\n", path: "collections.a.unique[0]", message: "at most 16 fields", line: 4),
        .init(text: "collections:\n  a:\n    fields: {\((0..<1001).map { "f\($0): text" }.joined(separator: ","))}\n", path: "collections.a.fields", message: "at most 1000 fields", line: 3),
    ]

    @Test("aliases that would repeat a long list tens of thousands of times are refused at once, not expanded")
    func aliasInflation() {
        let names = (0..<4000).map { "f\($0)" }
        let text = "collections:\n  a:\n    fields: {x: text}\n    unique:\n      - &u [\(names.joined(separator: ","))]\n" + String(repeating: "      - *u\n", count: 60_000)
        let clock = ContinuousClock()
        let started = clock.now
        let error = #expect(throws: SchemaError.self) { try SchemaParser.parse(text, file: "app.yaml") }
        #expect(error?.message.contains("at most") == true, "\(error?.message ?? "no error")")
        #expect(clock.now - started < .seconds(10), "refused before the aliases were expanded")
    }

    @Test("names the file, the line, the path and the problem", arguments: badSchemas)
    func reportsWhereAndWhat(_ bad: BadSchema) {
        let error = #expect(throws: SchemaError.self) { try SchemaParser.parse(bad.text, file: "app.yaml") }
        #expect(error?.file == "app.yaml")
        #expect(error?.path == bad.path)
        #expect(error?.message.contains(bad.message) == true, "\(error?.message ?? "no error")")
        if let line = bad.line { #expect(error?.line == line) }
        #expect(error?.description.hasPrefix("app.yaml") == true)
        #expect(error?.description.contains("\n") == false, "errors are one line")
    }

    @Test("a collection declared in two files is refused, naming both")
    func duplicateAcrossFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = folder.appending(path: "a.yaml").path(), second = folder.appending(path: "b.yaml").path()
        try "collections: {notes: {fields: {a: text}}}".write(toFile: first, atomically: true, encoding: .utf8)
        try "collections:\n  notes:\n    fields: {b: text}\n".write(toFile: second, atomically: true, encoding: .utf8)
        let error = #expect(throws: SchemaError.self) { try SchemaParser.load(files: [first, second]) }
        #expect(error?.file == second)
        #expect(error?.message.contains(first) == true)
    }

    @Test("a missing file is named in the error")
    func missingFile() {
        let error = #expect(throws: SchemaError.self) { try SchemaParser.load(files: ["/nonexistent/app.yaml"]) }
        #expect(error?.description.hasPrefix("/nonexistent/app.yaml: cannot read the file") == true)
    }
}
