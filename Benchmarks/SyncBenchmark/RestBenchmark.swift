import AsyncHTTPClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// `ferry-benchmark --rest [--rows N] [--postgres URL] [--json]`: the table API against the same work done directly in
/// SQL on the same database, in the same run (PostgREST itself is not packaged here).
///
/// - Inserts: N sermons and five notes each, 1,000 rows a `POST /rest/v1/…` (each merged, sequenced and announced as a
///   sync push is), against multi-row `INSERT`s of the same values into tables of the same columns.
/// - Reads: a page of 1,000 sermons with their notes embedded, newest first (`select=…,notes(…)&order=date.desc`),
///   against the one query PostgREST would run for it (the rows and their children aggregated to JSON by the database).
///
/// Each ratio is SQL time over REST time (1.0: as fast as the database alone); CPU seconds of this process (client and
/// server, not PostgreSQL's) stand beside wall time.
enum RestBenchmark {
    static let schema = """
        version: 1
        collections:
          sermons:
            fields:
              title: { type: text, required: true }
              date: timestamp
              speaker: text
              duration: integer
          notes:
            parent: { collection: sermons, field: sermon_id }
            fields:
              sermon_id: uuid
              text: text
              timestamp: real
        """
    static let rowsPerRequest = 1000
    static let notesPerSermon = 5
    static let readRepetitions = Int(ProcessInfo.processInfo.environment["FERRY_BENCH_READS"] ?? "") ?? 31

    struct Step {
        var wall: Double
        var cpu: Double
    }

    static func run(_ options: BenchmarkOptions, engine: TestEngine) async throws -> (table: String, json: String) {
        let count = options.rows
        return try await LiveServer.with(engine, schema: schema, configure: { $0.useFastPasswordHashing() }) { server, database in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let result = try await measure(count, engine: engine, server: server, database: database, client: client)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    private static func measure(
        _ count: Int, engine: TestEngine, server: LiveServer, database: TestDatabase, client: HTTPClient
    ) async throws -> (table: String, json: String) {
        let session = try await signUp(server: server, client: client)
        let space = session.userID.lowercasedText
        let sermons = (0..<count).map { index -> [String: JSONValue] in
            [
                "id": .string(UUID().lowercasedText), "title": .string("Sermon \(index)"), "speaker": .string("Speaker \(index % 17)"),
                "date": .string(Timestamp.format(Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 3600))),
                "duration": .number(Double(1800 + index % 900)),
            ]
        }
        let notes = sermons.flatMap { sermon in
            (0..<notesPerSermon).map { index -> [String: JSONValue] in
                [
                    "id": .string(UUID().lowercasedText), "sermon_id": sermon["id"]!, "text": .string("Note \(index) on \(sermon["title"]!.stringValue!)"),
                    "timestamp": .number(Double(index) * 60.5),
                ]
            }
        }
        progress("REST inserts: \(sermons.count) sermons, \(notes.count) notes")
        let restInsert = try await timed {
            for (table, rows) in [("sermons", sermons), ("notes", notes)] {
                for start in stride(from: 0, to: rows.count, by: rowsPerRequest) {
                    let batch = JSONValue.array(rows[start..<min(start + rowsPerRequest, rows.count)].map(JSONValue.object))
                    try await send(client, server, "POST", "/rest/v1/\(table)", token: session.token, body: batch.jsonText, expect: 201)
                }
            }
        }
        progress("SQL inserts of the same rows")
        let dialect: SQLDialect = engine == .postgres ? .postgres : .sqlite
        try await database.execute([
            copyTable("sermons", columns: ["title text", "date \(dialect.columnType(for: .timestamp))", "speaker text", "duration \(dialect.columnType(for: .integer))"], dialect: dialect),
            copyTable("notes", columns: ["sermon_id \(dialect.columnType(for: .uuid))", "text text", "timestamp \(dialect.columnType(for: .real))"], dialect: dialect),
            "CREATE INDEX sql_notes_parent ON sql_notes (sermon_id)",
        ])
        let sqlInsert = try await timed {
            for (table, rows, columns) in [("sermons", sermons, ["title", "date", "speaker", "duration"]), ("notes", notes, ["sermon_id", "text", "timestamp"])] {
                for start in stride(from: 0, to: rows.count, by: rowsPerRequest) {
                    let values = rows[start..<min(start + rowsPerRequest, rows.count)].map { row in
                        "(" + ([literal(row["id"]!), "'\(space)'"] + columns.map { literal(row[$0] ?? .null) }).joined(separator: ", ") + ")"
                    }
                    try await database.execute([
                        "INSERT INTO sql_\(table) (id, _space, \(columns.joined(separator: ", "))) VALUES \(values.joined(separator: ", "))",
                    ])
                }
            }
        }
        progress("reads: \(readRepetitions) × 1,000 sermons with their notes, each way")
        let path = "/rest/v1/sermons?select=id,title,date,speaker,notes(id,text,timestamp)&order=date.desc&limit=1000"
        var restReads: [Step] = []
        var sqlReads: [Step] = []
        let query = readQuery(space: space, dialect: dialect)
        for _ in 0..<readRepetitions {
            restReads.append(try await timed {
                let body = try await send(client, server, "GET", path, token: session.token, body: nil, expect: 200)
                guard body.count > 100_000 else { throw BenchmarkError("the REST read returned \(body.count) bytes") }
            })
            sqlReads.append(try await timed {
                let text = try await database.strings(query).first ?? ""
                guard text.utf8.count > 100_000 else { throw BenchmarkError("the SQL read returned \(text.utf8.count) bytes") }
            })
        }
        let restRead = Step(wall: median(restReads.map(\.wall)), cpu: median(restReads.map(\.cpu)))
        let sqlRead = Step(wall: median(sqlReads.map(\.wall)), cpu: median(sqlReads.map(\.cpu)))
        let insertRatio = sqlInsert.wall / restInsert.wall, readRatio = sqlRead.wall / restRead.wall
        let rows = sermons.count + notes.count
        let table = """

            | REST (server on \(engine)) | wall | CPU s | SQL / REST (goal) |
            |---|---:|---:|---:|
            | SQL: insert \(rows) rows, 1,000 a statement | \(format(sqlInsert.wall)) s | \(format(sqlInsert.cpu)) | |
            | REST: insert \(rows) rows, 1,000 a POST | \(format(restInsert.wall)) s | \(format(restInsert.cpu)) | \(format(insertRatio)) (≥ 0.30) |
            | SQL: 1,000 sermons with notes as JSON (median of \(readRepetitions)) | \(format(sqlRead.wall * 1000, 1)) ms | \(format(sqlRead.cpu * 1000, 1)) ms | |
            | REST: the same page, `notes(…)` embedded (median of \(readRepetitions)) | \(format(restRead.wall * 1000, 1)) ms | \(format(restRead.cpu * 1000, 1)) ms | \(format(readRatio)) (≥ 0.50) |
            """
        let json: [String: Any] = [
            "engine": "\(engine)", "rows": rows, "rest_insert_seconds": restInsert.wall, "sql_insert_seconds": sqlInsert.wall,
            "rest_insert_cpu_seconds": restInsert.cpu, "insert_ratio": insertRatio,
            "rest_read_seconds": restRead.wall, "sql_read_seconds": sqlRead.wall, "rest_read_cpu_seconds": restRead.cpu, "read_ratio": readRatio,
        ]
        return (table, String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), as: UTF8.self))
    }

    /// A table with a collection's columns, for the SQL baseline: what the database does with no Ferry in between.
    private static func copyTable(_ name: String, columns: [String], dialect: SQLDialect) -> String {
        let key = dialect == .postgres ? "id uuid PRIMARY KEY, _space uuid NOT NULL" : "id TEXT PRIMARY KEY, _space TEXT NOT NULL"
        return "CREATE TABLE sql_\(name) (\(key), \(columns.joined(separator: ", ")))"
    }

    /// What PostgREST runs for the page: the rows, each with its children aggregated, as one JSON text.
    private static func readQuery(space: String, dialect: SQLDialect) -> String {
        switch dialect {
        case .postgres:
            """
            SELECT coalesce(json_agg(json_build_object('id', s.id, 'title', s.title, 'date', s.date, 'speaker', s.speaker,
              'notes', (SELECT coalesce(json_agg(json_build_object('id', n.id, 'text', n.text, 'timestamp', n.timestamp)), '[]')
                        FROM sql_notes n WHERE n.sermon_id = s.id))), '[]')::text
            FROM (SELECT * FROM sql_sermons WHERE _space = '\(space)' ORDER BY date DESC LIMIT 1000) s
            """
        case .sqlite:
            """
            SELECT json_group_array(json_object('id', s.id, 'title', s.title, 'date', s.date, 'speaker', s.speaker,
              'notes', (SELECT json_group_array(json_object('id', n.id, 'text', n.text, 'timestamp', n.timestamp))
                        FROM sql_notes n WHERE n.sermon_id = s.id)))
            FROM (SELECT * FROM sql_sermons WHERE _space = '\(space)' ORDER BY date DESC LIMIT 1000) s
            """
        }
    }

    private static func literal(_ value: JSONValue) -> String {
        switch value {
        case .null: "NULL"
        case .number(let number): number.rounded() == number ? String(Int64(number)) : String(number)
        case .string(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        default: "'" + value.jsonText.replacingOccurrences(of: "'", with: "''") + "'"
        }
    }

    private static func signUp(server: LiveServer, client: HTTPClient) async throws -> (token: String, userID: UUID) {
        let body = #"{"email": "rest-\#(UUID().uuidString.prefix(8).lowercased())@example.com", "password": "correct horse battery"}"#
        let reply = try await send(client, server, "POST", "/auth/v1/signup", token: nil, body: body, expect: 200)
        guard let session = JSONValue(jsonText: String(decoding: reply, as: UTF8.self))?.objectValue,
              let token = session["access_token"]?.stringValue,
              let id = session["user"]?.objectValue?["id"]?.stringValue.flatMap(UUID.init(uuidString:))
        else { throw BenchmarkError("the sign-up returned no session") }
        return (token, id)
    }

    @discardableResult
    private static func send(
        _ client: HTTPClient, _ server: LiveServer, _ method: String, _ path: String, token: String?, body: String?, expect status: UInt
    ) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: server.baseURL.absoluteString + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "apikey", value: server.server.keys.anonKey)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 256 << 20)
        guard response.status.code == status else {
            throw BenchmarkError("\(method) \(path) answered \(response.status.code): \(String(buffer: bytes).prefix(300))")
        }
        return Array(bytes.readableBytesView)
    }

    private static func timed(_ body: () async throws -> Void) async throws -> Step {
        let (start, cpu) = (ProcessMetrics.monotonicNanoseconds(), ProcessMetrics.cpuSeconds())
        try await body()
        return Step(wall: Double(ProcessMetrics.monotonicNanoseconds() - start) / 1e9, cpu: ProcessMetrics.cpuSeconds() - cpu)
    }

    private static func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
}
