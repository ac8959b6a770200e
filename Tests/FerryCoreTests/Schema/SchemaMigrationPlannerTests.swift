import FerryCore
import Testing

@Suite("Schema migration planner")
struct SchemaMigrationPlannerTests {
    static let notes = CollectionDefinition(name: "notes", fields: [
        FieldDefinition(name: "title", type: .text, isRequired: true),
        FieldDefinition(name: "body", type: .text),
    ])

    func plan(_ old: [CollectionDefinition], _ new: [CollectionDefinition]) throws -> [SchemaChange] {
        try SchemaMigrationPlanner.plan(from: old, to: new)
    }

    func problems(_ old: [CollectionDefinition], _ new: [CollectionDefinition]) -> [DestructiveSchemaChangeError.Problem] {
        let error = #expect(throws: DestructiveSchemaChangeError.self) { try plan(old, new) }
        return error?.problems ?? []
    }

    @Test("an unchanged schema needs nothing")
    func unchanged() throws {
        #expect(try plan([Self.notes], [Self.notes]).isEmpty)
    }

    @Test("a new collection is created")
    func newCollection() throws {
        let tags = CollectionDefinition(name: "tags", fields: [FieldDefinition(name: "label", type: .text)])
        #expect(try plan([Self.notes], [Self.notes, tags]) == [.createCollection(tags)])
    }

    @Test("a new optional field is added")
    func newOptionalField() throws {
        var new = Self.notes
        new.fields.append(FieldDefinition(name: "pinned", type: .bool))
        #expect(try plan([Self.notes], [new]) == [.addField(collection: new, field: new.fields[2])])
    }

    @Test("unique keys can be added and dropped")
    func uniqueKeys() throws {
        var new = Self.notes
        new.uniqueKeys = [["title"]]
        #expect(try plan([Self.notes], [new]) == [.addUniqueKey(collection: new, key: ["title"])])
        #expect(try plan([new], [Self.notes]) == [.dropUniqueKey(collection: Self.notes, key: ["title"])])
    }

    @Test("a required field may become optional")
    func relaxRequired() throws {
        var new = Self.notes
        new.fields[0].isRequired = false
        #expect(try plan([Self.notes], [new]) == [.updateDefinition(new)])
    }

    @Test("a removed field is refused, naming collection and field")
    func removedField() {
        var new = Self.notes
        new.fields.removeLast()
        let found = problems([Self.notes], [new])
        #expect(found.map(\.collection) == ["notes"])
        #expect(found.map(\.field) == ["body"])
        #expect(found.first?.description.hasPrefix("notes.body: the field was removed") == true)
    }

    @Test("a changed type is refused")
    func changedType() {
        var new = Self.notes
        new.fields[1].type = .json
        #expect(problems([Self.notes], [new]).first?.message.contains("from text to json") == true)
    }

    @Test("a new required field, or an optional one becoming required, is refused")
    func newlyRequired() {
        var added = Self.notes
        added.fields.append(FieldDefinition(name: "author", type: .text, isRequired: true))
        #expect(problems([Self.notes], [added]).first?.field == "author")
        var tightened = Self.notes
        tightened.fields[1].isRequired = true
        #expect(problems([Self.notes], [tightened]).first?.field == "body")
    }

    @Test("a removed collection, a changed parent or encryption is refused")
    func structuralChanges() {
        #expect(problems([Self.notes], []).first?.collection == "notes")
        var encrypted = Self.notes
        encrypted.isEncrypted = true
        #expect(problems([Self.notes], [encrypted]).first?.message.contains("encryption") == true)
        var child = Self.notes
        child.parent = .init(collection: "sermons", field: "title")
        #expect(problems([Self.notes], [child]).first?.message.contains("parent") == true)
    }

    @Test("every problem is reported at once, on one line")
    func allProblemsAtOnce() {
        let error = #expect(throws: DestructiveSchemaChangeError.self) {
            try plan([Self.notes], [CollectionDefinition(name: "notes", fields: [])])
        }
        #expect(error?.problems.count == 2)
        #expect(error?.description.contains("notes.title") == true)
        #expect(error?.description.contains("notes.body") == true)
        #expect(error?.description.contains("\n") == false)
    }
}
