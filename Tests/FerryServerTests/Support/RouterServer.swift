@testable import FerryServer
import FerryTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOFoundationCompat
import ServiceLifecycle

/// A Ferry server whose router the test calls in process (HummingbirdTesting's `.router` framework): the same
/// routes, middleware, services and database as `ferry serve`, without a socket or an HTTP client, so a test costs
/// the server's work alone and many run at once without contending for ports and connections.
struct RouterServer: ServerUnderTest {
    let server: FerryServer
    let client: any TestClientProtocol

    /// Prepares a server on a fresh database of `engine` (as ``LiveServer/with(_:schema:configure:_:)`` does), runs
    /// its services (the PostgreSQL pool, the collectors), and hands `body` a server to send requests to.
    static func with<Result>(
        _ engine: TestEngine, schema: String? = nil, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (RouterServer) async throws -> Result
    ) async throws -> Result {
        try await with(engine, schema: schema, configure: configure) { server, _ in try await body(server) }
    }

    /// Like ``with(_:schema:configure:_:)``, also handing `body` the database, to check what the server stored.
    static func with<Result>(
        _ engine: TestEngine, schema: String? = nil, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (RouterServer, TestDatabase) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.with(engine) { database in
            var configuration = database.serverConfiguration
            if let schema { configuration.schemaFiles = [try database.writeSchema(schema)] }
            configure(&configuration)
            let server = try await FerryServer.prepare(configuration, logger: .testing)
            let services = ServiceGroup(services: server.services, logger: .testing)
            let running = Task { try await services.run() }
            defer { Task { try? await server.storage.close() } }
            do {
                let result = try await Application(router: server.makeRouter(), logger: .testing).test(.router) { client in
                    try await body(RouterServer(server: server, client: client), database)
                }
                await services.triggerGracefulShutdown()
                _ = await running.result
                return result
            } catch {
                await services.triggerGracefulShutdown()
                _ = await running.result
                throw error
            }
        }
    }

    func exchange(_ method: String, _ path: String, headers: [String: String], body: Data?) async throws -> HTTPClient.Reply {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: field, value: value))
        }
        let response = try await client.executeRequest(
            uri: path, method: HTTPRequest.Method(rawValue: method) ?? .get, headers: fields, body: body.map { ByteBuffer(bytes: $0) }
        )
        var replyHeaders: [String: String] = [:]
        for field in response.headers {
            replyHeaders[field.name.canonicalName] = replyHeaders[field.name.canonicalName].map { "\($0), \(field.value)" } ?? field.value
        }
        return HTTPClient.Reply(status: response.status.code, headers: replyHeaders, body: Data(buffer: response.body))
    }
}
