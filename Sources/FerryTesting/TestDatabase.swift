import FerryServer
import Foundation
import Logging
import PostgresNIO

/// A throwaway database for one test: a SQLite file in a new temporary folder, or a new database
/// in the test PostgreSQL cluster. ``destroy()`` removes it.
public struct TestDatabase: Sendable {
    /// The engine.
    public let engine: TestEngine
    /// Where the database is, ready for ``ServerConfiguration/database``.
    public let location: DatabaseLocation
    /// A temporary folder the test may use as the server's data directory.
    public let folder: String
    private let postgresName: String?

    /// A server configuration with defaults that keeps its data here: this database, and this folder for keys.
    ///
    /// `/health` waits up to 15 s for the database instead of 2, and a request up to 90 s instead of 15: tests
    /// check what the server answers, not how fast, and on a 2-core machine running the whole suite a first
    /// PostgreSQL connection can take seconds and 50 refreshes queued on one token's row lock longer than 15 s.
    /// Tests of these limits set their own.
    public var serverConfiguration: ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = folder
        configuration.database = location
        configuration.healthTimeout = .seconds(15)
        configuration.requestDeadline = .seconds(90)
        // A full run creates and drops hundreds of databases in one cluster on 2 cores; a new connection has been
        // seen to wait more than the default 10 s there while the cluster was busy.
        configuration.databaseConnectTimeout = .seconds(45)
        // Light scrypt: at OWASP's cost each sign-up or sign-in is a second of CPU in a debug build, and the whole
        // suite is CPU-bound. The tests of hashing and its limits set their own cost.
        configuration.useFastPasswordHashing()
        return configuration
    }

    /// Creates a fresh, empty database on `engine`.
    public static func create(_ engine: TestEngine) async throws -> TestDatabase {
        let folder = FileManager.default.temporaryDirectory
            .appending(path: "ferry-test-\(UUID().uuidString.prefix(8).lowercased())").path()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        switch engine {
        case .sqlite:
            return TestDatabase(engine: engine, location: .sqlite(path: folder + "/ferry.sqlite"), folder: folder, postgresName: nil)
        case .postgres:
            let admin = try adminURL()
            let name = "ferry_test_\(UUID().uuidString.prefix(12).lowercased())"
            try await withConnection(to: admin) { connection, logger in
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""), logger: logger)
            }
            var url = admin
            url.database = name
            return TestDatabase(engine: engine, location: .postgres(url), folder: folder, postgresName: name)
        }
    }

    /// Deletes the database and the temporary folder.
    public func destroy() async throws {
        try? FileManager.default.removeItem(atPath: folder)
        if let postgresName {
            try await Self.withConnection(to: try Self.adminURL()) { connection, logger in
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(postgresName)\" WITH (FORCE)"), logger: logger
                )
            }
        }
    }

    /// Runs `body` with a fresh database, destroying it afterwards whatever happens.
    public static func with<Result>(
        _ engine: TestEngine, _ body: (TestDatabase) async throws -> Result
    ) async throws -> Result {
        let database = try await create(engine)
        do {
            let result = try await body(database)
            try await database.destroy()
            return result
        } catch {
            try? await database.destroy()
            throw error
        }
    }

    static func adminURL() throws -> PostgresURL {
        guard let text = TestEngine.postgresAdminURL else {
            throw TestSupportError(
                "PostgreSQL tests are required (\(TestEngine.requirePostgresVariable)=1) but \(TestEngine.postgresURLVariable) is not set; run scripts/test.sh"
            )
        }
        return try PostgresURL(parsing: text)
    }

    /// Runs `body` on a new connection to `url`, closed afterwards.
    static func withConnection(
        to url: PostgresURL, _ body: (PostgresConnection, Logger) async throws -> Void
    ) async throws {
        let logger = Logger(label: "ferry.testing")
        let configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.username, password: url.password,
            database: url.database, tls: .disable
        )
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            try await body(connection, logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// A misconfigured test environment.
public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
