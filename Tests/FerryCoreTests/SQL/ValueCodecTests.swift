import FerryCore
import FerryTesting
import Foundation
import Testing

/// FerryCore's one wire ↔ column conversion per dialect (`SQLDialect.columnValue` / `wireValue`).
@Suite("SQL value codec")
struct ValueCodecTests {
    @Test("every type's edge values read back unchanged on each dialect", arguments: SQLDialect.allCases)
    func roundTrip(_ dialect: SQLDialect) throws {
        for (type, value) in FieldValueEdgeCases.all {
            let column = try dialect.columnValue(value, type: type)
            #expect(dialect.wireValue(column, type: type) == value, "\(type) \(value.jsonText) on \(dialect)")
        }
        #expect(try dialect.columnValue(.null, type: .text) == .null)
    }

    @Test("a value a column cannot hold is refused, never replaced", arguments: SQLDialect.allCases)
    func refusals(_ dialect: SQLDialect) {
        let refused: [(FieldType, JSONValue)] = [
            (.uuid, "not-a-uuid"), (.timestamp, "2024-13-45"), (.bytes, "%%% not base64"), (.integer, 1.5),
            (.integer, 1e300), (.bool, 1), (.text, 3), (.real, "1"),
        ]
        for (type, value) in refused {
            #expect(throws: ColumnValueError.self, "\(type) \(value.jsonText)") { try dialect.columnValue(value, type: type) }
        }
    }

    @Test("PostgreSQL's rendering in row_to_json reads back in wire form")
    func postgresRendering() {
        let postgres = SQLDialect.postgres
        #expect(postgres.wireValue(rendered: "2026-11-01T10:00:00+00:00", type: .timestamp) == "2026-11-01T10:00:00.000Z")
        #expect(postgres.wireValue(rendered: "\\x0001ff", type: .bytes) == .string(Data([0, 1, 255]).base64EncodedString()))
        #expect(postgres.wireValue(rendered: "\\x", type: .bytes) == "")
        #expect(postgres.wireValue(rendered: "0001-06-01T10:00:00+00:00 BC", type: .timestamp) == "0000-06-01T10:00:00.000Z", "PostgreSQL's 1 BC is year 0000")
        #expect(postgres.wireValue(rendered: "\\xzz", type: .bytes) == .null, "malformed hex is not read as bytes")
    }
}

@Suite("Timestamps")
struct TimestampTests {
    @Test("formatting what was parsed gives the same text, from year 0000 to 9999")
    func stableFormatting() throws {
        for text in [
            "0000-01-01T00:00:00.000Z", "0001-02-28T23:59:59.999Z", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z",
            "2000-02-29T12:00:00.500Z", "2026-11-23T05:00:00.123Z", "9999-12-31T23:59:59.999Z",
        ] {
            let date = try #require(Timestamp.parse(text), "\(text) parses")
            #expect(Timestamp.format(date) == text)
        }
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0.0004)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0.9996)) == "1970-01-01T00:00:01.000Z", "rounded, not cut")
    }
}

@Suite("Timestamps, parsing")
struct TimestampParsingTests {
    @Test("offsets, fractions and separators are read; impossible dates and junk are refused")
    func parsing() {
        #expect(Timestamp.parse("2026-11-01T12:00:00+02:00").map(Timestamp.format) == "2026-11-01T10:00:00.000Z")
        #expect(Timestamp.parse("2026-11-01t10:00:00.1234z").map(Timestamp.format) == "2026-11-01T10:00:00.123Z")
        #expect(Timestamp.parse("2026-11-01 10:00:00-0130").map(Timestamp.format) == "2026-11-01T11:30:00.000Z")
        for bad in ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-01T24:00:00Z",
                    "2026-11-01T10:00:00", "2026-11-01", "2026-11-01T10:00:00.Z", "2026-11-01T10:00:00Z trailing", "", "🚢"] {
            #expect(Timestamp.parse(bad) == nil, "\(bad)")
        }
        #expect(Timestamp.parse("2024-02-29T00:00:00Z") != nil)
    }
}
