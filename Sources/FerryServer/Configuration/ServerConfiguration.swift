import Logging

/// Everything `ferry serve` needs to start, as nested `Sendable` values with defaults.
public struct ServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port to listen on; 0 asks the system for a free one.
    public var port: Int = 8080
    /// The folder for the embedded database and the server's generated keys.
    public var dataDirectory: String = "./ferry-data"
    /// Where records live: the embedded SQLite file (default) or a PostgreSQL URL.
    public var database: DatabaseLocation?
    /// With PostgreSQL, a folder for blob bytes instead of the database: a volume every instance mounts (`--blob-dir`).
    /// `nil` keeps them in PostgreSQL. On SQLite blobs are always files in the data folder, where backups include them.
    /// The database's first start records which it is; a later start that disagrees throws `blob_location_mismatch`.
    public var blobDirectory: String?
    /// Schema files, merged in order.
    public var schemaFiles: [String] = []
    /// How long `/health` waits for the database before answering 503.
    public var healthTimeout: Duration = .seconds(2)
    /// How long a request may wait on the database before it fails with 503.
    public var requestDeadline: Duration = .seconds(15)
    /// How long start-up waits for PostgreSQL to accept a connection.
    public var databaseConnectTimeout: Duration = .seconds(10)
    /// How long a connection may go without a complete request head, body part or response before it is closed:
    /// a client that sends half a header and stalls holds a connection at most this long.
    public var idleTimeout: Duration = .seconds(30)
    /// The proxies whose forwarding headers name the client, for per-client rate limits; none by default.
    public var trustedProxies = TrustedProxies()
    /// The URL clients reach this server at (`https://sync.example.com`), for the absolute URLs it writes (a TUS upload's
    /// `Location`); `nil` writes paths relative to the request, never the request's own `Host` header.
    public var publicURL: String?
    /// The bearer token `GET /metrics` requires; `nil` serves metrics only to loopback peers that no proxy forwarded.
    public var metricsToken: String?

    /// Accounts, sessions and tokens.
    public var auth = AuthConfiguration()
    /// Limits of the sync endpoints, clock skew and tombstone retention.
    public var sync = SyncLimits()
    /// Limits and heartbeat of the realtime stream.
    public var realtime = RealtimeLimits()
    /// Size limit and retention of blobs.
    public var blobs = BlobLimits()

    /// Scheduled backups of the embedded database (SQLite only).
    public var backups = BackupSchedule()
    /// Outgoing mail and the rules of mailed codes.
    public var mail = MailConfiguration()
    /// Sign in with Apple and Apple's notices.
    public var apple = AppleSignInConfiguration()
    /// Push notifications through APNs: background notifications after commits, and apps' visible ones.
    public var notifications = NotificationConfiguration()

    /// The GitHub OAuth code exchange for vaults (`/oauth/v1/github/token`).
    public var githubOAuth = GitHubOAuthConfiguration()
    /// The operator console (`/console`).
    public var console = ConsoleConfiguration()

    /// Creates a configuration with the defaults.
    public init() {}

    /// The database that will be opened: the given one, or SQLite in the data folder.
    public var resolvedDatabase: DatabaseLocation {
        database ?? .sqlite(path: dataDirectory.hasSuffix("/") ? dataDirectory + "ferry.sqlite" : dataDirectory + "/ferry.sqlite")
    }
}
