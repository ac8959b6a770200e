import FerryServer
import FerryTesting
import Foundation

/// A real `ferry serve` process on a free port over a test database, serving one of the example schemas.
struct ServedProcess {
    let process: FerryProcess
    /// `ferry serve`'s arguments, to start it again the same way.
    let arguments: [String]
    let port: Int
    /// The anon key clients send as `apikey`.
    let anonKey: String

    var baseURL: String { "http://127.0.0.1:\(port)" }

    static func start(_ database: TestDatabase, schema example: String, adding extra: [String] = []) async throws -> ServedProcess {
        let schema = database.folder + "/" + example
        try ExampleSchemas.text(example).write(toFile: schema, atomically: true, encoding: .utf8)
        let port = try freePort()
        var arguments = ["serve", "--port", "\(port)", "--data-dir", database.folder, "--schema", schema]
        if case .postgres(let url) = database.location {
            arguments += ["--database", "postgres://\(url.username)@\(url.host):\(url.port)/\(url.database)?sslmode=disable"]
        }
        arguments += extra
        let process = try await CrashHarness.launch(arguments)
        let anonKey = try String(contentsOfFile: database.folder + "/keys/anon-key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return ServedProcess(process: process, arguments: arguments, port: port, anonKey: anonKey)
    }
}
