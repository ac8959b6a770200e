import Foundation
import Testing

/// The server's layers, checked on its source (docs/architecture.md, "Layers inside one module"): the HTTP stack
/// only in the HTTP layer and the application, the database drivers only in their engine's folder, the engines named
/// only there and where the application picks one, and no service answering in HTTP's terms.
@Suite("Architecture: the server's layers")
struct ArchitectureTests {
    /// One rule: code that may appear only in some folders of `Sources/FerryServer`.
    struct Rule: Sendable {
        var name: String
        /// What the code may not contain: an `import` of one of these modules, or one of these names as a word.
        var imports: Set<String> = []
        var names: Set<String> = []
        /// Folders (relative to `Sources/FerryServer`, ending in `/`) and files where it is allowed, with the reason.
        var allowed: [String: String]

        /// The violations in `file` (relative path) with `text`: "path:line: what".
        func violations(in file: String, text: String) -> [String] {
            guard !allowed.keys.contains(where: { file == $0 || ($0.hasSuffix("/") && file.hasPrefix($0)) }) else { return [] }
            var found: [String] = []
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
                let words = code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init)
                if let first = words.first(where: { $0 != "preconcurrency" && $0 != "testable" }), first == "import",
                   let module = words.dropFirst().first(where: { $0 != "import" }), imports.contains(module) {
                    found.append("\(file):\(number + 1): imports \(module) (\(name))")
                }
                for word in Set(words).sorted() where names.contains(word) {
                    found.append("\(file):\(number + 1): names \(word) (\(name))")
                }
            }
            return found
        }
    }

    static let rules: [Rule] = [
        Rule(
            name: "the HTTP stack belongs to the HTTP layer and the application",
            imports: [
                "Hummingbird", "HummingbirdCore", "HummingbirdRouter", "HummingbirdWebSocket", "HTTPTypes", "NIOHTTP1", "NIOHTTP2",
                "NIOHTTPTypes", "NIOHTTPTypesHTTP1", "NIOWebSocket", "WSCore",
            ],
            allowed: [
                "HTTP/": "routes, middleware, the authenticator and the stream's WebSocket handler",
                "Server/": "the application: its channel, router and services",
                "Notifications/APNsClient.swift": "an HTTP/2 client of Apple's push service, not the server's HTTP",
            ]
        ),
        Rule(
            name: "services answer with ServiceError, which the HTTP layer maps in one table",
            names: ["APIError", "HTTPResponse", "Request", "Response"],
            allowed: ["HTTP/": "the HTTP layer", "Server/": "the application"]
        ),
        Rule(
            name: "a database driver belongs to its engine",
            imports: ["GRDB", "GRDBSQLite", "FerryGRDB", "PostgresNIO", "_ConnectionPoolModule"],
            allowed: ["Storage/SQLite/": "the SQLite engine", "Storage/Postgres/": "the PostgreSQL engine"]
        ),
        Rule(
            name: "an engine is named only by itself and where the application picks one",
            names: ["SQLiteStorage", "PostgresStorage"],
            allowed: [
                "Storage/SQLite/": "the SQLite engine", "Storage/Postgres/": "the PostgreSQL engine",
                "Server/": "the application opens the engine its configuration names",
            ]
        ),
    ]

    static let sources: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Sources/FerryServer")

    /// Every Swift file of the server module, by its path relative to `Sources/FerryServer`.
    static func sourceFiles() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        var files: [(String, String)] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(sources.standardizedFileURL.path.count + 1))
            files.append((path, try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test("every file of the server keeps to its layer", arguments: rules.indices)
    func layers(rule index: Int) throws {
        let files = try Self.sourceFiles()
        #expect(files.count > 100, "the server's sources were not found at \(Self.sources.path)")
        let rule = Self.rules[index]
        let violations = files.flatMap { rule.violations(in: $0.path, text: $0.text) }
        #expect(violations.isEmpty, "\(rule.name):\n\(violations.joined(separator: "\n"))")
    }

    @Test("the rules find what they forbid, outside the folders they allow, and skip comments")
    func rulesFindViolations() {
        let http = Self.rules[0], services = Self.rules[1], drivers = Self.rules[2], engines = Self.rules[3]
        #expect(http.violations(in: "Sync/SyncService.swift", text: "import Foundation\n@preconcurrency import Hummingbird").count == 1)
        #expect(http.violations(in: "HTTP/Routes/SyncRoutes.swift", text: "import Hummingbird").isEmpty)
        #expect(services.violations(in: "Realtime/StreamService.swift", text: "throw APIError(.badRequest, .badRequest, \"x\")").count == 1)
        #expect(services.violations(in: "Realtime/StreamService.swift", text: "/// Unlike ``APIError``, …\nlet x = 1 // an APIError").isEmpty)
        #expect(drivers.violations(in: "Storage/StorageAvailability.swift", text: "import PostgresNIO").count == 1)
        #expect(drivers.violations(in: "Storage/Postgres/PostgresStorage.swift", text: "import PostgresNIO").isEmpty)
        #expect(engines.violations(in: "Console/OperatorAdministration.swift", text: "let storage = try SQLiteStorage(path: path)").count == 1)
        #expect(engines.violations(in: "Console/OperatorAdministration.swift", text: "let storage = try SQLiteStorageKind()").isEmpty)
    }
}
