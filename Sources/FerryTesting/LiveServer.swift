import FerryServer
import Foundation
import Logging

/// A real `ferry serve` running in-process on a free loopback port, for end-to-end tests.
///
/// ```swift
/// try await LiveServer.with(.postgres, schema: "collections: …") { server in
///     let (_, response) = try await URLSession.shared.data(from: server.url("/health"))
/// }
/// ```
public final class LiveServer: Sendable {
    /// The running server.
    public let server: FerryServer
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    /// The configuration it runs with (its port included).
    public let configuration: ServerConfiguration
    private let logger: Logger
    private let task: Task<Void, any Error>

    private init(server: FerryServer, baseURL: URL, configuration: ServerConfiguration, logger: Logger, task: Task<Void, any Error>) {
        self.server = server
        self.baseURL = baseURL
        self.configuration = configuration
        self.logger = logger
        self.task = task
    }

    /// The port it listens on.
    public var port: Int { baseURL.port ?? configuration.port }

    /// The absolute URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Starts a server with `configuration` on loopback and waits until it listens: on `port`, or on a free
    /// port when it is 0 (restart a stopped server on its old port to test clients that remember it).
    public static func start(_ configuration: ServerConfiguration, port: Int = 0, logger: Logger = .testing) async throws -> LiveServer {
        // A port given back (a restart) may be taken meanwhile as the source port of another test's connection, which
        // lasts a moment: try again for a few seconds rather than fail.
        var attempts = 0
        while true {
            do {
                return try await startOnce(configuration, port: port, logger: logger)
            } catch let error as ServerStartupError where error.code == .addressInUse && port != 0 && attempts < 50 {
                attempts += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private static func startOnce(_ configuration: ServerConfiguration, port: Int, logger: Logger) async throws -> LiveServer {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = port
        let server = try await FerryServer.prepare(configuration, logger: logger)
        let (addresses, continuation) = AsyncStream<FerryServer.ListeningAddress>.makeStream()
        let task = Task {
            defer { continuation.finish() }
            try await server.run { address in continuation.yield(address) }
        }
        for await address in addresses {
            let baseURL = URL(string: address.baseURL)!
            configuration.port = baseURL.port ?? port
            return LiveServer(server: server, baseURL: baseURL, configuration: configuration, logger: logger, task: task)
        }
        do {
            try await task.value
        } catch {
            try? await server.storage.close()
            throw error
        }
        throw TestSupportError("the server stopped before it listened")
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        await server.shutdown()
        _ = await task.result
    }

    /// Stops this server gracefully and starts a new one with the same configuration on the same port and
    /// database, as a deploy or a supervisor would; clients that remember the address reach the new one.
    public func restarted() async throws -> LiveServer {
        await stop()
        return try await Self.start(configuration, port: port, logger: logger)
    }

    /// Runs `body` against a server on a fresh database of `engine`, then stops it and deletes the database.
    ///
    /// `schema` is the text of a schema file (YAML or JSON); `configure` may change anything else.
    public static func with<Result>(
        _ engine: TestEngine,
        schema: String? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (LiveServer) async throws -> Result
    ) async throws -> Result {
        try await with(engine, schema: schema, configure: configure) { server, _ in try await body(server) }
    }

    /// Like ``with(_:schema:configure:_:)``, also handing `body` the database, to check what the server stored.
    public static func with<Result>(
        _ engine: TestEngine,
        schema: String? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (LiveServer, TestDatabase) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.with(engine) { database in
            var configuration = database.serverConfiguration
            if let schema { configuration.schemaFiles = [try database.writeSchema(schema)] }
            configure(&configuration)
            let server = try await start(configuration)
            do {
                let result = try await body(server, database)
                await server.stop()
                return result
            } catch {
                await server.stop()
                throw error
            }
        }
    }
}

extension Logger {
    /// A logger for tests: warnings and worse, unless `FERRY_TEST_LOG_LEVEL` says otherwise.
    public static var testing: Logger {
        var logger = Logger(label: "ferry.test")
        logger.logLevel = ProcessInfo.processInfo.environment["FERRY_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }
}
