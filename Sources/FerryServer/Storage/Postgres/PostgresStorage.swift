import FerryCore
import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle

/// The scale-out engine: PostgreSQL through a PostgresNIO connection pool.
///
/// The pool is a ServiceLifecycle service: ``client`` must run (in the server's service group,
/// or a task running `client.run()`, as tests do) for queries to be served.
public final class PostgresStorage: DatabaseStorage {
    public let dialect = SQLDialect.postgres
    /// The connection pool; run it as a service.
    public let client: PostgresClient
    let logger: Logger

    /// Key of the advisory lock that serialises migrations and schema changes across server instances.
    static let schemaLockKey: Int64 = 0x6665_7272_7901

    /// Creates a pool for `url`. Call ``checkReachable(timeout:)`` before serving.
    public init(url: PostgresURL, logger: Logger) {
        self.client = PostgresClient(configuration: Self.clientConfiguration(url), backgroundLogger: logger)
        self.url = url
        self.logger = logger
    }

    let url: PostgresURL

    public func close() async throws {}

    public func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
    }

    static func clientConfiguration(_ url: PostgresURL) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.username, password: url.password,
            database: url.database, tls: tls(url.tlsMode)
        )
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    static func tls(_ mode: PostgresURL.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }
}

extension PostgresStorage {
    /// Runs the connection pool until cancelled, for a command that uses the database without a server (`ferry serve`
    /// runs the pool as one of its services).
    func runConnections() async {
        await client.run()
    }

    /// Opens one connection outside the pool and runs `SELECT 1`, so a wrong host, port, password or
    /// database name ends start-up with PostgreSQL's own reason instead of a pool retrying forever.
    public func checkReachable(timeout: Duration) async throws(ServerStartupError) {
        do {
            try await withTimeout(timeout) { [self] in
                try await withStandaloneConnection(connectTimeout: timeout) { connection in
                    _ = try await connection.query("SELECT 1", logger: self.logger)
                }
            }
        } catch {
            throw ServerStartupError(.databaseUnreachable, "cannot reach PostgreSQL at \(url): \(Self.reason(error))")
        }
    }

    /// Runs `body` on a connection of its own, closed afterwards. Start-up work (migrations, schema)
    /// uses one, since the pool serves only once the server's service group runs it.
    func withStandaloneConnection<Result: Sendable>(
        connectTimeout: Duration = .seconds(10),
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.username, password: url.password,
            database: url.database, tls: Self.connectionTLS(url.tlsMode)
        )
        configuration.options.connectTimeout = .init(connectTimeout)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    static func connectionTLS(_ mode: PostgresURL.TLSMode) -> PostgresConnection.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(try! NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try! NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }

    /// A short reason from a PostgresNIO or NIO error, without connection details that could hold secrets.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection:
                if let underlying = error.underlying { return "\(underlying)" }
                return "the connection failed"
            default: return "\(error.code)"
            }
        }
        if error is TimeoutError { return "no answer within the connect timeout" }
        return "\(error)"
    }
}
