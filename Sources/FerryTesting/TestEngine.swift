import FerryCore
import Foundation

/// The database engines a storage test runs against: `@Test(arguments: TestEngine.available)`.
public enum TestEngine: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A temporary SQLite file.
    case sqlite
    /// A temporary database in the PostgreSQL cluster named by `FERRY_TEST_POSTGRES_URL`.
    case postgres

    public var description: String { rawValue }

    /// The SQL dialect of the engine.
    public var dialect: SQLDialect { self == .sqlite ? .sqlite : .postgres }

    /// The environment variable holding an admin URL of the test cluster (set by `scripts/test.sh`).
    public static let postgresURLVariable = "FERRY_TEST_POSTGRES_URL"
    /// When `1`, PostgreSQL tests must run: a missing cluster fails them instead of skipping (CI sets it).
    public static let requirePostgresVariable = "FERRY_REQUIRE_POSTGRES"

    /// Whether PostgreSQL must be tested.
    public static var isPostgresRequired: Bool {
        ProcessInfo.processInfo.environment[requirePostgresVariable] == "1"
    }

    /// The admin URL of the test cluster, if one is configured.
    public static var postgresAdminURL: String? {
        ProcessInfo.processInfo.environment[postgresURLVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// SQLite always; PostgreSQL when a cluster is configured or required. When it is skipped,
    /// the reason is printed once, so a local run says why it tested less.
    public static let available: [TestEngine] = {
        if postgresAdminURL != nil || isPostgresRequired { return [.sqlite, .postgres] }
        print("⚠︎ Skipping PostgreSQL tests: \(postgresURLVariable) is not set (scripts/test.sh starts a cluster and sets it).")
        return [.sqlite]
    }()
}
