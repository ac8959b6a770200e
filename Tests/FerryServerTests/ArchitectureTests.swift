import Foundation
import Testing

/// The server's layers, checked on its source (docs/architecture.md, "Modules"): the HTTP stack only in the HTTP
/// layer and the application, the database drivers only in their engine's folder, an engine's types named only there
/// and where the application picks one, and no service answering in HTTP's terms.
@Suite("Architecture: the server's layers")
struct ArchitectureTests {
    /// One rule: code that may appear only in some folders of `Sources/FerryServer`.
    struct Rule: Sendable {
        var name: String
        /// Modules it may not import (a name ending in `*` is a prefix), and names it may not use.
        var imports: Set<String> = []
        var names: Set<String> = []
        /// Folders (relative to `Sources/FerryServer`, ending in `/`) and files where it is allowed, with the reason.
        var allowed: [String: String]

        /// The violations in `file` (relative path) with `text`: "path:line: what".
        func violations(in file: String, text: String) -> [String] {
            violations(in: file, code: ArchitectureTests.code(of: text))
        }

        /// The same, for the file's lines as ``ArchitectureTests/code(of:)`` gives them.
        func violations(in file: String, code lines: [String]) -> [String] {
            guard !allowed.keys.contains(where: { file == $0 || ($0.hasSuffix("/") && file.hasPrefix($0)) }) else { return [] }
            var found: [String] = []
            for (number, code) in lines.enumerated() {
                for module in ArchitectureTests.imports(in: code) where forbids(module) {
                    found.append("\(file):\(number + 1): imports \(module) (\(name))")
                }
                let words = Set(code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init))
                for word in words.sorted() where names.contains(word) {
                    found.append("\(file):\(number + 1): names \(word) (\(name))")
                }
            }
            return found
        }

        private func forbids(_ module: String) -> Bool {
            imports.contains(module) || imports.contains { $0.hasSuffix("*") && module.hasPrefix($0.dropLast()) }
        }
    }

    /// Each line of `text` with its comments and the contents of its string literals left out.
    static func code(of text: String) -> [String] {
        enum Inside { case code, string, rawString, multilineString, blockComment }
        let (quote, slash, star, hash, backslash) = (UInt8(ascii: "\""), UInt8(ascii: "/"), UInt8(ascii: "*"), UInt8(ascii: "#"), UInt8(ascii: "\\"))
        var inside = Inside.code
        var lines: [String] = []
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let bytes = Array(line)
            var out: [UInt8] = [], index = 0
            func byte(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }
            var isTripleQuote: Bool { byte(0) == quote && byte(1) == quote && byte(2) == quote }
            if inside == .string || inside == .rawString { inside = .code }  // a one-line literal ends with its line
            scan: while index < bytes.count {
                switch inside {
                case .blockComment:
                    if byte(0) == star, byte(1) == slash { inside = .code; index += 2 } else { index += 1 }
                case .multilineString:
                    if isTripleQuote { inside = .code; index += 3 } else { index += 1 }
                case .string:
                    if byte(0) == backslash { index += 2 } else if byte(0) == quote { inside = .code; index += 1 } else { index += 1 }
                case .rawString:
                    if byte(0) == quote, byte(1) == hash { inside = .code; index += 2 } else { index += 1 }
                case .code:
                    if byte(0) == slash, byte(1) == slash { break scan }
                    if byte(0) == slash, byte(1) == star { inside = .blockComment; index += 2 }
                    else if isTripleQuote { inside = .multilineString; index += 3 }
                    else if byte(0) == hash, byte(1) == quote { inside = .rawString; index += 2 }
                    else if byte(0) == quote { inside = .string; index += 1 }
                    else { out.append(bytes[index]); index += 1 }
                }
            }
            lines.append(String(decoding: out, as: UTF8.self))
        }
        return lines
    }

    /// The modules a line of code imports, in any of Swift's forms (attributes, access, `import struct M.T`, several
    /// statements on one line).
    static func imports(in code: String) -> [String] {
        guard code.contains("import") else { return [] }  // Swift's regular expressions are slow on Linux
        let statement = /^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|typealias|func|let|var)\s+)?(\w+)/
        return code.split(separator: ";").compactMap { part in (try? statement.firstMatch(in: String(part))).map { String($0.output.1) } }
    }

    /// The types declared at the top level of the files under `folder`.
    static func declaredTypes(in files: [(path: String, code: [String])], under folder: String) -> Set<String> {
        let declaration = /^(?:(?:public|package|internal|fileprivate|private|final|nonisolated)\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)/
        var names: Set<String> = []
        for file in files where file.path.hasPrefix(folder) {
            for line in file.code where line.first?.isLetter == true {
                if let match = try? declaration.firstMatch(in: line) { names.insert(String(match.output.1)) }
            }
        }
        return names
    }

    static func rules(engineTypes: Set<String>) -> [Rule] {
        [
            Rule(
                name: "the HTTP stack belongs to the HTTP layer and the application",
                imports: ["Hummingbird*", "HTTPTypes*", "NIOHTTP*", "NIOWebSocket", "WSCore", "WSClient", "AsyncHTTPClient"],
                allowed: [
                    "HTTP/": "routes, middleware and the authenticator",
                    "Server/": "the application: its channel, router, services and the stream's WebSocket handler",
                    "Notifications/APNsClient.swift": "an HTTP/2 client of Apple's push service, not the server's HTTP",
                ]
            ),
            Rule(
                name: "services answer with ServiceError, which the HTTP layer maps in one table",
                names: ["APIError", "HTTPResponse", "HTTPFields", "Request", "Response"],
                allowed: ["HTTP/": "the HTTP layer", "Server/": "the application"]
            ),
            Rule(
                name: "a database driver belongs to its engine",
                imports: ["GRDB", "GRDBSQLite", "FerryGRDB", "PostgresNIO", "_ConnectionPoolModule"],
                allowed: ["Storage/SQLite/": "the SQLite engine", "Storage/Postgres/": "the PostgreSQL engine"]
            ),
            Rule(
                name: "an engine's types are named only by itself and where the application picks one",
                names: engineTypes,
                allowed: [
                    "Storage/SQLite/": "the SQLite engine", "Storage/Postgres/": "the PostgreSQL engine",
                    "Server/": "the application opens the engine its configuration names",
                    "Storage/StorageAvailability.swift": "asks each engine what its driver's errors mean",
                    "Backup/": "backups copy the embedded database's data folder, which only SQLite has",
                    "Console/ConsoleBackups.swift": "the console lists and starts those backups",
                ]
            ),
        ]
    }

    static let sources: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Sources/FerryServer")

    /// Every Swift file of the server module, by its path relative to `Sources/FerryServer`, as lines of code; read
    /// once for all the rules.
    static let files = Result { try sourceFiles() }

    static func sourceFiles() throws -> [(path: String, code: [String])] {
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        var files: [(String, [String])] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(sources.standardizedFileURL.path.count + 1))
            files.append((path, code(of: try String(contentsOf: url, encoding: .utf8))))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test("every file of the server keeps to its layer", arguments: 0..<4)
    func layers(rule index: Int) throws {
        let files = try Self.files.get()
        #expect(files.count > 100, "the server's sources were not found at \(Self.sources.path)")
        let engineTypes = Self.declaredTypes(in: files, under: "Storage/SQLite/").union(Self.declaredTypes(in: files, under: "Storage/Postgres/"))
        #expect(engineTypes.isSuperset(of: ["SQLiteStorage", "PostgresStorage", "PostgresRealtimeFeed", "SQLiteFailures"]))
        let rule = Self.rules(engineTypes: engineTypes)[index]
        let violations = files.flatMap { rule.violations(in: $0.path, code: $0.code) }
        #expect(violations.isEmpty, "\(rule.name):\n\(violations.joined(separator: "\n"))")
    }

    @Test("imports are found in every form Swift has")
    func importForms() {
        let forms = [
            "import GRDB", "@preconcurrency import GRDB", "@testable @preconcurrency import GRDB", "internal import GRDB",
            "package import GRDB", "@_exported import GRDB", "@_spi(Internal) import GRDB", "@_implementationOnly import GRDB",
            "import struct GRDB.Row", "  import GRDB", "import Foundation; import GRDB",
        ]
        for form in forms { #expect(Self.imports(in: form).contains("GRDB"), "\(form)") }
        #expect(Self.imports(in: "let important = importer").isEmpty)
    }

    @Test("comments and string literals are not code")
    func commentsAndStrings() {
        let text = """
            let a = "Request too large" // an APIError
            /* APIError
               Response */ let b = 1
            let c = #"say "Response""# + "https://x" + Response.x
            let d = \"\"\"
                APIError
                \"\"\"
            """
        let code = Self.code(of: text)
        #expect(!code.joined().contains("APIError"))
        #expect(!code[0].contains("Request"))
        #expect(code[2].contains("let b = 1"))
        #expect(code[3].contains("Response.x"), "after a raw string and a URL the line is code again")
    }

    @Test("the rules find what they forbid outside the folders they allow")
    func rulesFindViolations() {
        let rules = Self.rules(engineTypes: ["SQLiteStorage", "PostgresRealtimeFeed"])
        let (http, services, drivers, engines) = (rules[0], rules[1], rules[2], rules[3])
        #expect(http.violations(in: "Sync/SyncService.swift", text: "import Foundation\n@preconcurrency import HummingbirdCore").count == 1)
        #expect(http.violations(in: "Sync/SyncService.swift", text: "import NIOHTTP2").count == 1)
        #expect(http.violations(in: "HTTP/Routes/SyncRoutes.swift", text: "import Hummingbird").isEmpty)
        #expect(services.violations(in: "Realtime/StreamService.swift", text: "throw APIError(.badRequest, .badRequest, \"x\")").count == 1)
        #expect(services.violations(in: "Realtime/StreamService.swift", text: "/// Unlike ``APIError``, …\nlet x = 1 // an APIError").isEmpty)
        #expect(drivers.violations(in: "Storage/StorageAvailability.swift", text: "internal import PostgresNIO").count == 1)
        #expect(drivers.violations(in: "Storage/Postgres/PostgresStorage.swift", text: "import PostgresNIO").isEmpty)
        #expect(engines.violations(in: "Console/OperatorAdministration.swift", text: "let storage = try SQLiteStorage(path: path)").count == 1)
        #expect(engines.violations(in: "Devices/DeviceService.swift", text: "let t = PostgresRealtimeFeed.timeout").count == 1)
        #expect(engines.violations(in: "Console/OperatorAdministration.swift", text: "let storage = try SQLiteStorageKind()").isEmpty)
    }
}
