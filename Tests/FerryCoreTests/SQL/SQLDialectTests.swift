@testable import FerryCore
import Testing

@Suite("SQL dialects")
struct SQLDialectTests {
    @Test("every field type has a column type on each engine", arguments: SQLDialect.allCases)
    func columnTypes(_ dialect: SQLDialect) {
        for type in FieldType.allCases {
            #expect(!dialect.columnType(for: type).isEmpty)
        }
    }

    @Test("tables start with the reserved sync columns", arguments: SQLDialect.allCases)
    func reservedColumns(_ dialect: SQLDialect) throws {
        let collection = CollectionDefinition(name: "notes", fields: [FieldDefinition(name: "body", type: .text)])
        let create = try #require(dialect.createStatements(for: collection).first)
        for column in Identifier.reservedColumns.sorted() + ["body"] {
            #expect(create.contains("\"\(column)\""), "\(column) in \(create)")
        }
    }

    @Test("encrypted collections store ciphertext as bytes, except the parent link")
    func encryptedStorage() {
        let collection = CollectionDefinition(
            name: "messages",
            fields: [FieldDefinition(name: "session_id", type: .uuid), FieldDefinition(name: "count", type: .integer)],
            parent: .init(collection: "sessions", field: "session_id"),
            isEncrypted: true
        )
        #expect(SQLDialect.postgres.storageType(for: collection.fields[0], in: collection) == "uuid")
        #expect(SQLDialect.postgres.storageType(for: collection.fields[1], in: collection) == "bytea")
    }

    @Test("index names stay within PostgreSQL's 63 bytes and stay distinct")
    func longIndexNames() {
        let long = String(repeating: "a", count: 60)
        let first = SQLDialect.postgres.uniqueIndexName(long, ["first_field"])
        let second = SQLDialect.postgres.uniqueIndexName(long, ["second_field"])
        #expect(first.utf8.count <= 63 && second.utf8.count <= 63)
        #expect(first != second)
        #expect(SQLDialect.postgres.uniqueIndexName("notes", ["title"]) == "notes__uq__title")
    }

    @Test("identifiers are quoted, with quotes doubled")
    func quoting() {
        #expect(SQLDialect.sqlite.quote("order") == "\"order\"")
        #expect(SQLDialect.postgres.quote("a\"b") == "\"a\"\"b\"")
    }
}
