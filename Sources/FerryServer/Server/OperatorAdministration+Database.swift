import FerryCore
import FerrySecurity
import Foundation
import Logging

extension OperatorAdministration {
    // Beside `FerryServer.openStorage`, the other place that picks an engine: `ferry admin` needs no server.
    /// Opens `database` (migrating it, as `ferry serve` would), runs `body`, closes it. New passwords are hashed at
    /// `hashing`'s cost.
    public static func with<Result: Sendable>(
        _ database: DatabaseLocation, hashing: PasswordHasher.Parameters = .owasp, logger: Logger,
        _ body: (OperatorAdministration) async throws -> Result
    ) async throws -> Result {
        let hasher = PasswordHasher(parameters: hashing)
        switch database {
        case .sqlite(let path):
            let storage = try SQLiteStorage(path: path)
            do {
                try await storage.migrate(Migration.server)
                let result = try await body(OperatorAdministration(storage: storage, hasher: hasher))
                try await storage.close()
                return result
            } catch {
                try? await storage.close()
                throw error
            }
        case .postgres(let url):
            let storage = PostgresStorage(url: url, logger: logger)
            try await storage.checkReachable(timeout: .seconds(10))
            try await storage.migrate(Migration.server)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await storage.runConnections() }
                defer { group.cancelAll() }
                return try await body(OperatorAdministration(storage: storage, hasher: hasher))
            }
        }
    }
}
