import ArgumentParser
import FerryServer
import Foundation
import Logging
import UnixSignals
import ServiceLifecycle

/// `ferry serve`: runs the server on the embedded SQLite database or on PostgreSQL.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Ferry server.",
        discussion: """
            Every option can also come from the environment: FERRY_HOST, FERRY_PORT, FERRY_DATA_DIR,
            FERRY_DATABASE, FERRY_SCHEMA (several files separated by ':'), FERRY_LOG_LEVEL, FERRY_JWT_SECRET,
            FERRY_ACCESS_TOKEN_LIFETIME, FERRY_SESSION_TIMEBOX, FERRY_SESSION_INACTIVITY_TIMEOUT, FERRY_MAX_CLOCK_SKEW,
            FERRY_TOMBSTONE_RETENTION, FERRY_IDLE_TIMEOUT (seconds), FERRY_GITHUB_CLIENT_ID, FERRY_GITHUB_CLIENT_SECRET,
            FERRY_GITHUB_TOKEN_URL, FERRY_TRUSTED_PROXIES (CIDRs separated by ','), FERRY_FORWARDED_HEADER, FERRY_METRICS_TOKEN,
            FERRY_PUBLIC_URL, FERRY_MAX_SPACES_PER_ACCOUNT, FERRY_MAX_DEVICES_PER_ACCOUNT, FERRY_MAX_PENDING_INVITATIONS,
            FERRY_MAX_PUSHES_IN_FLIGHT, FERRY_MAX_STREAMS, FERRY_MAX_STREAMS_PER_ACCOUNT, FERRY_MAX_BLOB_MIB,
            FERRY_MAX_SIGNED_URL_SECONDS, FERRY_MAX_OPEN_UPLOADS_PER_ACCOUNT, FERRY_MAX_OPEN_UPLOADS_PER_SPACE, FERRY_MAX_OPEN_UPLOAD_MIB_PER_ACCOUNT,
            FERRY_MAX_STORED_MIB_PER_ACCOUNT, FERRY_APPLE_CLIENT_IDS (separated by ','), FERRY_APPLE_KEYS_URL, FERRY_SMTP_URL,
            FERRY_SMTP_SENDER, FERRY_MAIL_CODE_LIFETIME, FERRY_MAIL_INTERVAL, FERRY_MAIL_TEMPLATES, FERRY_SITE_URL,
            FERRY_REDIRECT_URLS (separated by ','), FERRY_BACKUP_EVERY, FERRY_BACKUP_KEEP.
            A flag wins over the environment. Prefer FERRY_GITHUB_CLIENT_SECRET, FERRY_SMTP_URL (which holds the SMTP password)
            and FERRY_METRICS_TOKEN to the flags: arguments show in the process list.
            """
    )

    @Option(help: "Address to listen on. [default: 127.0.0.1]")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one. [default: 8080]")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Folder for the embedded database and keys. [default: ./ferry-data]")
    var dataDirectory: String?

    @Option(help: "postgres://user:password@host:5432/db, or sqlite:PATH. [default: SQLite in the data dir]")
    var database: String?

    @Option(name: .customLong("blob-dir"), help: "With PostgreSQL: a folder for file bytes, on a volume every instance mounts. [default: in PostgreSQL]")
    var blobDirectory: String?

    @Option(name: .customLong("schema"), help: "A schema file (YAML or JSON); repeat for several.")
    var schemaFiles: [String] = []

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. [default: info]")
    var logLevel: String?

    @Option(name: .customLong("jwt-secret"), help: "A fixed JWT signing secret (32+ characters) shared by every instance. [default: generated in the data dir]")
    var jwtSecret: String?

    @Option(name: .customLong("access-token-lifetime"), help: "Seconds an access token lives. [default: 3600]")
    var accessTokenLifetime: Int?

    @Option(name: .customLong("session-timebox"), help: "Seconds a session may live at most. [default: no limit]")
    var sessionTimebox: Int?

    @Option(name: .customLong("session-inactivity-timeout"), help: "Seconds a session may go without a refresh. [default: no limit]")
    var sessionInactivityTimeout: Int?

    @Option(name: .customLong("max-clock-skew"), help: "Seconds a device clock may run ahead of the server's before it is lowered. [default: 60]")
    var maximumClockSkew: Int?

    @Option(name: .customLong("tombstone-retention"), help: "Seconds deleted records are kept for offline devices. [default: 2592000, 30 days]")
    var tombstoneRetention: Int?

    @Option(name: .customLong("github-client-id"), help: "The GitHub OAuth app's client id, for vault sign-in (/oauth/v1/github/token).")
    var githubClientID: String?

    @Option(name: .customLong("github-client-secret"), help: "The GitHub OAuth app's client secret (prefer FERRY_GITHUB_CLIENT_SECRET).")
    var githubClientSecret: String?

    @Option(name: .customLong("github-token-url"), help: "GitHub's token endpoint. [default: https://github.com/login/oauth/access_token]")
    var githubTokenURL: String?

    @Option(name: .customLong("max-spaces-per-account"), help: "Spaces one account may be in, its personal space included. [default: 1000]")
    var maxSpacesPerAccount: Int?

    @Option(name: .customLong("max-devices-per-account"), help: "Devices one account may have registered and not revoked. [default: 100]")
    var maxDevicesPerAccount: Int?

    @Option(name: .customLong("max-pending-invitations"), help: "Pending invitations one account may have sent. [default: 100]")
    var maxPendingInvitations: Int?

    @Option(name: .customLong("max-pushes-in-flight"), help: "Pushes a device may have on the wire at once; 1 while instances that do not check 'follows' still run. [default: 3]")
    var maxPushesInFlight: Int?

    @Option(name: .customLong("max-streams"), help: "Realtime streams one instance holds open at once. [default: 10000]")
    var maxStreams: Int?

    @Option(name: .customLong("max-streams-per-account"), help: "Realtime streams one account holds open at once. [default: 100]")
    var maxStreamsPerAccount: Int?

    @Option(name: .customLong("carried-change-bytes"), help: "The largest realtime poke that carries its commit's changes, in bytes (up to 65536, what Ferry's clients read); 0 sends plain pokes. [default: 32768]")
    var carriedChangeBytes: Int?

    @Option(name: .customLong("max-blob-mib"), help: "The largest blob (attached file) accepted, in MiB. [default: 5120]")
    var maxBlobMiB: Int?

    @Option(name: .customLong("max-signed-url-seconds"), help: "The longest a signed Storage URL may live. [default: 31536000, a year]")
    var maxSignedURLSeconds: Int?

    @Option(name: .customLong("max-open-uploads-per-account"), help: "Storage uploads (TUS) one account may have open. [default: 50]")
    var maxOpenUploadsPerAccount: Int?

    @Option(name: .customLong("max-open-uploads-per-space"), help: "Sync blob uploads one space may have under way. [default: 1000]")
    var maxOpenUploadsPerSpace: Int?

    @Option(name: .customLong("max-open-upload-mib-per-account"), help: "MiB one account's open Storage uploads may declare in all. [default: 20480]")
    var maxOpenUploadMiBPerAccount: Int?

    @Option(name: .customLong("max-stored-mib-per-account"), help: "MiB of Storage objects one account may own. [default: 51200]")
    var maxStoredMiBPerAccount: Int?

    @Option(name: .customLong("public-url"), help: "The URL clients reach this server at (https://sync.example.com), for the absolute URLs it writes. [default: relative paths]")
    var publicURL: String?

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may stall (half a header included) before it is closed. [default: 30]")
    var idleTimeout: Int?

    @Option(name: .customLong("trusted-proxy"), help: "A proxy (CIDR or address) whose forwarding header names the client; repeat for several.")
    var trustedProxies: [String] = []

    @Option(name: .customLong("forwarded-header"), help: "The header the trusted proxies write: x-forwarded-for or forwarded (FERRY_FORWARDED_HEADER). [default: x-forwarded-for]")
    var forwardedHeader: String?

    @Option(name: .customLong("metrics-token"), help: "The bearer token GET /metrics requires (prefer FERRY_METRICS_TOKEN). [default: loopback only]")
    var metricsToken: String?

    @OptionGroup(title: "Accounts: Sign in with Apple and mail")
    var accountOptions: AccountOptions

    @OptionGroup(title: "Push notifications (APNs)")
    var notificationOptions: NotificationOptions

    @OptionGroup(title: "Backups")
    var backupOptions: BackupOptions

    @Flag(name: .customLong("print-keys"), help: "Print the anon key clients send as 'apikey' and the service_role key backends use (a secret), then exit.")
    var printKeys = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = try ServeSettings(command: self, environment: environment)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
        if printKeys {
            // Keys only: no database is opened and no schema applied.
            let keys = try await ServerKeys.load(for: settings.configuration)
            print("anon key: \(keys.anonKey)")
            print("service_role key: \(keys.serviceRoleKey)")
            return
        }
        let logger = Logger(label: "ferry")
        let hashing = settings.configuration.auth.passwordHashing
        if hashing.logN < PasswordHasher.Parameters.owasp.logN {
            logger.warning("new password hashes are cheaper than OWASP's minimum (--password-hash-cost \(hashing.logN) < 17): for tests and development only")
        }
        let server = try await FerryServer.prepare(settings.configuration, logger: logger)
        let store = server.storeDescription
        // The application owns the signals: SIGTERM and SIGINT shut the server down gracefully (in-flight requests finish).
        let service = server.service { address in
            // Written unbuffered, so a supervisor or script reading the pipe sees it at once.
            FileHandle.standardOutput.write(Data("Ferry listening on \(address.baseURL) (\(store))\n".utf8))
        }
        try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
    }
}

/// The options of `ferry serve` after applying the environment and the defaults, validated.
struct ServeSettings {
    var configuration = ServerConfiguration()
    var logLevel = Logger.Level.info

    init(command: ServeCommand, environment: [String: String]) throws {
        if let host = command.host ?? environment["FERRY_HOST"] {
            guard !host.isEmpty else { throw CommandFailure(message: "--host cannot be empty", status: 64) }
            configuration.host = host
        }
        if let port = try command.port ?? environment["FERRY_PORT"].map(Self.port) {
            guard (0...65535).contains(port) else {
                throw CommandFailure(message: "--port must be between 0 and 65535, not \(port)", status: 64)
            }
            configuration.port = port
        }
        if let folder = command.dataDirectory ?? environment["FERRY_DATA_DIR"] {
            configuration.dataDirectory = folder
        }
        if let database = command.database ?? environment["FERRY_DATABASE"], !database.isEmpty {
            configuration.database = try DatabaseLocation(parsing: database)
        }
        if let folder = command.blobDirectory ?? environment["FERRY_BLOB_DIR"], !folder.isEmpty {
            guard case .postgres = configuration.resolvedDatabase else {
                throw CommandFailure(message: "--blob-dir is for PostgreSQL (--database postgres://…); on SQLite files live in the data dir, where backups include them", status: 64)
            }
            configuration.blobDirectory = folder
        }
        configuration.schemaFiles = command.schemaFiles.isEmpty
            ? (environment["FERRY_SCHEMA"] ?? "").split(separator: ":").map(String.init)
            : command.schemaFiles
        if let secret = command.jwtSecret ?? environment["FERRY_JWT_SECRET"] {
            guard secret.utf8.count >= 32 else {
                throw CommandFailure(message: "the JWT secret must be at least 32 characters", status: 64)
            }
            configuration.auth.jwtSecret = secret
        }
        if let seconds = try Self.seconds(command.accessTokenLifetime, environment, "FERRY_ACCESS_TOKEN_LIFETIME", flag: "--access-token-lifetime") {
            configuration.auth.accessTokenLifetime = seconds
        }
        configuration.auth.sessionTimebox = try Self.seconds(command.sessionTimebox, environment, "FERRY_SESSION_TIMEBOX", flag: "--session-timebox")
        configuration.auth.sessionInactivityTimeout = try Self.seconds(
            command.sessionInactivityTimeout, environment, "FERRY_SESSION_INACTIVITY_TIMEOUT", flag: "--session-inactivity-timeout"
        )
        if let seconds = try Self.seconds(command.maximumClockSkew, environment, "FERRY_MAX_CLOCK_SKEW", flag: "--max-clock-skew") {
            configuration.sync.maximumClockSkew = seconds
        }
        if let seconds = try Self.seconds(command.tombstoneRetention, environment, "FERRY_TOMBSTONE_RETENTION", flag: "--tombstone-retention") {
            configuration.sync.tombstoneRetention = seconds
        }
        configuration.githubOAuth.clientID = command.githubClientID ?? environment["FERRY_GITHUB_CLIENT_ID"]
        configuration.githubOAuth.clientSecret = command.githubClientSecret ?? environment["FERRY_GITHUB_CLIENT_SECRET"]
        if let tokenURL = command.githubTokenURL ?? environment["FERRY_GITHUB_TOKEN_URL"], !tokenURL.isEmpty {
            configuration.githubOAuth.tokenURL = tokenURL
            if let problem = configuration.githubOAuth.tokenURLProblem {
                throw CommandFailure(message: "--github-token-url \(problem)", status: 64)
            }
        }
        // Caps: a whole number from the flag or its variable, 1 to 1,000,000; MiB caps are kept in bytes.
        let caps: [(Int?, String, String, WritableKeyPath<ServerConfiguration, Int>)] = [
            (command.maxSpacesPerAccount, "FERRY_MAX_SPACES_PER_ACCOUNT", "--max-spaces-per-account", \.sync.maximumSpacesPerAccount),
            (command.maxDevicesPerAccount, "FERRY_MAX_DEVICES_PER_ACCOUNT", "--max-devices-per-account", \.sync.maximumDevicesPerAccount),
            (command.maxPendingInvitations, "FERRY_MAX_PENDING_INVITATIONS", "--max-pending-invitations", \.sync.maximumPendingInvitations),
            (command.maxPushesInFlight, "FERRY_MAX_PUSHES_IN_FLIGHT", "--max-pushes-in-flight", \.sync.maximumPushesInFlight),
            (command.maxStreams, "FERRY_MAX_STREAMS", "--max-streams", \.realtime.maximumStreams),
            (command.maxStreamsPerAccount, "FERRY_MAX_STREAMS_PER_ACCOUNT", "--max-streams-per-account", \.realtime.maximumStreamsPerAccount),
            (command.maxOpenUploadsPerAccount, "FERRY_MAX_OPEN_UPLOADS_PER_ACCOUNT", "--max-open-uploads-per-account", \.blobs.maximumOpenUploadsPerAccount),
            (command.maxOpenUploadsPerSpace, "FERRY_MAX_OPEN_UPLOADS_PER_SPACE", "--max-open-uploads-per-space", \.blobs.maximumOpenUploadsPerSpace),
        ]
        for (flag, variable, name, setting) in caps {
            if let count = try Self.count(flag, environment, variable, flag: name) { configuration[keyPath: setting] = count }
        }
        if let bytes = try Self.count(command.carriedChangeBytes, environment, "FERRY_CARRIED_CHANGE_BYTES", flag: "--carried-change-bytes", in: 0...65_536) {
            configuration.realtime.carriedChangeBytes = bytes
        }
        let mebibyteCaps: [(Int?, String, String, WritableKeyPath<ServerConfiguration, Int64>)] = [
            (command.maxBlobMiB, "FERRY_MAX_BLOB_MIB", "--max-blob-mib", \.blobs.maximumBlobBytes),
            (command.maxOpenUploadMiBPerAccount, "FERRY_MAX_OPEN_UPLOAD_MIB_PER_ACCOUNT", "--max-open-upload-mib-per-account", \.blobs.maximumOpenUploadBytesPerAccount),
            (command.maxStoredMiBPerAccount, "FERRY_MAX_STORED_MIB_PER_ACCOUNT", "--max-stored-mib-per-account", \.blobs.maximumStoredBytesPerAccount),
        ]
        for (flag, variable, name, setting) in mebibyteCaps {
            if let mebibytes = try Self.count(flag, environment, variable, flag: name) { configuration[keyPath: setting] = Int64(mebibytes) << 20 }
        }
        if let seconds = try Self.seconds(command.maxSignedURLSeconds, environment, "FERRY_MAX_SIGNED_URL_SECONDS", flag: "--max-signed-url-seconds") {
            configuration.blobs.maximumSignedURLLifetime = seconds
        }
        if let url = command.publicURL ?? environment["FERRY_PUBLIC_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil,
                  parsed.query == nil, parsed.fragment == nil
            else {
                throw CommandFailure(message: "--public-url must be an http or https URL such as https://sync.example.com, not '\(url)'", status: 64)
            }
            configuration.publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        if let seconds = try Self.seconds(command.idleTimeout, environment, "FERRY_IDLE_TIMEOUT", flag: "--idle-timeout") {
            configuration.idleTimeout = seconds
        }
        let proxies = command.trustedProxies.isEmpty
            ? (environment["FERRY_TRUSTED_PROXIES"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            : command.trustedProxies
        configuration.trustedProxies = TrustedProxies(try proxies.filter { !$0.isEmpty }.map { text in
            guard let network = IPNetwork(text) else {
                throw CommandFailure(message: "--trusted-proxy must be an address or CIDR (10.0.0.0/8, 2001:db8::/32), not '\(text)'", status: 64)
            }
            return network
        })
        if let name = command.forwardedHeader ?? environment["FERRY_FORWARDED_HEADER"], !name.isEmpty {
            guard let header = TrustedProxies.Header(rawValue: name.lowercased()) else {
                throw CommandFailure(message: "--forwarded-header is x-forwarded-for or forwarded, not '\(name)'", status: 64)
            }
            configuration.trustedProxies.header = header
        }
        if let token = command.metricsToken ?? environment["FERRY_METRICS_TOKEN"], !token.isEmpty {
            guard token.utf8.count >= 16 else { throw CommandFailure(message: "the metrics token must be at least 16 characters", status: 64) }
            configuration.metricsToken = token
        }
        try command.accountOptions.apply(to: &configuration, environment: environment)
        try command.backupOptions.apply(to: &configuration, environment: environment)
        try command.notificationOptions.apply(to: &configuration, environment: environment)
        if let level = command.logLevel ?? environment["FERRY_LOG_LEVEL"] {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw CommandFailure(
                    message: "unknown log level '\(level)' (use trace, debug, info, notice, warning, error or critical)", status: 64
                )
            }
            logLevel = parsed
        }
    }

    /// A positive number of seconds from the flag or its variable, or `nil` when neither is set.
    static func seconds(_ flag: Int?, _ environment: [String: String], _ variable: String, flag name: String) throws -> Duration? {
        guard let value = try flag ?? environment[variable].map({ text in
            guard let number = Int(text) else { throw CommandFailure(message: "\(variable) must be a number of seconds, not '\(text)'", status: 64) }
            return number
        }) else { return nil }
        let tenYears = 10 * 365 * 24 * 3600
        guard (1...tenYears).contains(value) else {
            throw CommandFailure(message: "\(name) must be between 1 and \(tenYears) seconds, not \(value)", status: 64)
        }
        return .seconds(value)
    }

    /// A cap from the flag or its variable (1 to 1,000,000), or `nil` when neither is set.
    static func count(
        _ flag: Int?, _ environment: [String: String], _ variable: String, flag name: String, in range: ClosedRange<Int> = 1...1_000_000
    ) throws -> Int? {
        guard let value = try flag ?? environment[variable].map({ text in
            guard let number = Int(text) else { throw CommandFailure(message: "\(variable) must be a whole number, not '\(text)'", status: 64) }
            return number
        }) else { return nil }
        guard range.contains(value) else {
            throw CommandFailure(message: "\(name) must be between \(range.lowerBound) and \(range.upperBound), not \(value)", status: 64)
        }
        return value
    }

    private static func port(_ text: String) throws -> Int {
        guard let port = Int(text) else { throw CommandFailure(message: "FERRY_PORT must be a number, not '\(text)'", status: 64) }
        return port
    }
}
