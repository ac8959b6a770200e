import FerryCore
import Foundation
import Testing

@Suite("JSON parsing and decoding from the tree")
struct JSONParsingTests {
    @Test("parses what JSONDecoder parses, to the same value", arguments: [
        #"{"a": [1, -2.5, 3e2, true, false, null], "b": {"c": "d"}}"#,
        #""caf\u00e9 \"quoted\" \\ \/ \n\t \ud83d\ude00 ☕""#,
        "0", "-0.125", "1E-3", "[]", "{}", " [ {} , [ ] ] ",
    ])
    func matchesJSONDecoder(_ text: String) throws {
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try JSONValue(parsing: Data(text.utf8)) == expected)
    }

    @Test("refuses what is not JSON", arguments: [
        "", "[", "{\"a\" 1}", "[1,]", "01", "1.", "+1", ".5", "tru", "nul", "\"unterminated", "\"tab\there\"",
        "[1] 2", "{\"a\":1,}", "\"\\x\"", "\"\\ud800\"", "NaN", "1e999",
    ])
    func refusesInvalid(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(text.utf8)) }
    }

    @Test("refuses invalid UTF-8")
    func refusesInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test("nesting is bounded: 64 levels parse, 65 are refused")
    func depth() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONValue(parsing: Data(ok.utf8))
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError(reason: .tooDeep(limit: 64), offset: 64)) { try JSONValue(parsing: Data(deep.utf8)) }
        let objects = String(repeating: #"{"a":"#, count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(objects.utf8)) }
    }

    @Test("a cancelled task stops parsing a long input")
    func cancellation() async throws {
        let long = Data(("[" + Array(repeating: "{}", count: 500_000).joined(separator: ",") + "]").utf8)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try JSONValue(parsing: long)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    struct Body: Decodable, Equatable {
        enum Kind: String, Decodable { case one, two }
        var id: UUID
        var count: Int64
        var kind: Kind
        var note: String?
        var tags: [String]
        var extra: [String: JSONValue]
    }

    @Test("decodes Decodable types from the tree, JSONValue members whole")
    func decodesTypes() throws {
        let text = #"{"id":"8F6F4A52-2C1A-4B36-9E2B-1B1A9A0E6C11","count":9007199254740991,"kind":"two","note":null,"tags":["a"],"extra":{"x":[{},{"y":null}]}}"#
        let body = try JSONValueDecoder().decode(Body.self, from: JSONValue(parsing: Data(text.utf8)))
        #expect(body == Body(
            id: UUID(uuidString: "8F6F4A52-2C1A-4B36-9E2B-1B1A9A0E6C11")!, count: 9_007_199_254_740_991, kind: .two, note: nil,
            tags: ["a"], extra: ["x": [[:], ["y": nil]]]
        ))
    }

    @Test("errors name the coding path, as JSONDecoder's do", arguments: [
        (#"{"count":1,"kind":"one","tags":[],"extra":{}}"#, "id"),
        (#"{"id":"nope","count":1,"kind":"one","tags":[],"extra":{}}"#, "id"),
        (#"{"id":"8F6F4A52-2C1A-4B36-9E2B-1B1A9A0E6C11","count":1.5,"kind":"one","tags":[],"extra":{}}"#, "count"),
        (#"{"id":"8F6F4A52-2C1A-4B36-9E2B-1B1A9A0E6C11","count":1,"kind":"three","tags":[],"extra":{}}"#, "kind"),
        (#"{"id":"8F6F4A52-2C1A-4B36-9E2B-1B1A9A0E6C11","count":1,"kind":"one","tags":[1],"extra":{}}"#, "tags.0"),
    ])
    func errorPaths(_ text: String, _ path: String) throws {
        let tree = try JSONValue(parsing: Data(text.utf8))
        do {
            _ = try JSONValueDecoder().decode(Body.self, from: tree)
            Issue.record("decoded \(text)")
        } catch let error as DecodingError {
            let context: DecodingError.Context? = switch error {
            case .keyNotFound(let key, let context): .init(codingPath: context.codingPath + [key], debugDescription: "")
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): context
            @unknown default: nil
            }
            #expect(context?.codingPath.map(\.stringValue).joined(separator: ".") == path)
        }
    }
}
