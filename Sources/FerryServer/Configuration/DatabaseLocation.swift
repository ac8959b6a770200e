import Foundation

/// Where the server keeps its data.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file (created when missing, opened in WAL mode).
    case sqlite(path: String)
    /// A PostgreSQL database.
    case postgres(PostgresURL)

    /// Reads `--database`: a `postgres://` or `postgresql://` URL, or `sqlite:PATH` / a plain path.
    public init(parsing text: String) throws(ServerStartupError) {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresURL(parsing: text))
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count)).replacingOccurrences(of: "//", with: "", options: .anchored)
            guard !path.isEmpty else { throw .invalidDatabaseURL("sqlite: needs a file path, e.g. sqlite:./ferry-data/ferry.sqlite") }
            self = .sqlite(path: path)
        } else if text.contains("://") {
            throw .invalidDatabaseURL("unsupported database URL scheme in '\(PostgresURL.redacted(text))'; use postgres://user:password@host:5432/db or sqlite:PATH")
        } else {
            self = .sqlite(path: text)
        }
    }

    /// Whether this is the embedded SQLite engine.
    public var isSQLite: Bool {
        if case .sqlite = self { true } else { false }
    }

    /// A summary for logs and the start-up line; never includes a password.
    public var description: String {
        switch self {
        case .sqlite(let path): "SQLite at \(path)"
        case .postgres(let url): "PostgreSQL at \(url)"
        }
    }
}

/// A parsed `postgres://user:password@host:port/database?sslmode=…` URL.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// TLS use, following libpq's `sslmode` names.
    public enum TLSMode: String, Sendable, Hashable {
        /// Never use TLS.
        case disable
        /// Use TLS when the server offers it (libpq's default).
        case prefer
        /// Require TLS.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 by default).
    public var port: Int
    /// The role to connect as.
    public var username: String
    /// The role's password, if any; never printed.
    public var password: String?
    /// The database name.
    public var database: String
    /// Whether to use TLS.
    public var tlsMode: TLSMode

    /// Parses a URL, naming the part that is wrong on failure.
    public init(parsing text: String) throws(ServerStartupError) {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw .invalidDatabaseURL("'\(Self.redacted(text))' is not a valid URL; expected postgres://user:password@host:5432/database")
        }
        guard let user = components.user, !user.isEmpty else {
            throw .invalidDatabaseURL("the PostgreSQL URL needs a user name: postgres://USER@\(host)/database")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else {
            throw .invalidDatabaseURL("the PostgreSQL URL needs a database name: postgres://\(user)@\(host)/DATABASE")
        }
        var tlsMode = TLSMode.prefer
        for item in components.queryItems ?? [] where item.name == "sslmode" {
            switch item.value {
            case "disable", "allow": tlsMode = .disable
            case "prefer": tlsMode = .prefer
            case "require", "verify-ca", "verify-full": tlsMode = .require
            default: throw .invalidDatabaseURL("unknown sslmode '\(item.value ?? "")' (use disable, prefer or require)")
            }
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.tlsMode = tlsMode
    }

    /// `user@host:port/database`, without the password.
    public var description: String { "\(username)@\(host):\(port)/\(database)" }

    /// `text` with any password replaced, for error messages.
    static func redacted(_ text: String) -> String {
        // Whatever parses or not, anything between "//" and the last "@" may hold a password.
        guard let scheme = text.range(of: "://"), let at = text.range(of: "@", options: .backwards),
              scheme.upperBound <= at.lowerBound
        else { return text }
        let credentials = text[scheme.upperBound..<at.lowerBound]
        let user = credentials.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return text[..<scheme.upperBound] + (credentials.contains(":") ? "\(user):***" : user) + text[at.lowerBound...]
    }
}
